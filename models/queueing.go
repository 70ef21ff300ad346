package models

import (
	"fmt"
	"math"
)

// ErlangC is the probability that an arrival waits in an M/M/c queue with c
// servers and offered load a = lambda/mu (in Erlangs). It requires a < c.
//
// It uses the numerically stable recurrence on the Erlang-B blocking
// probability, B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)), and
// C = c B / (c - a (1 - B)).
func ErlangC(c int, a float64) (float64, error) {
	if c < 1 {
		return 0, fmt.Errorf("erlang C: need at least one server, got %d", c)
	}
	if a <= 0 || math.IsNaN(a) {
		return 0, fmt.Errorf("erlang C: offered load must be positive, got %g", a)
	}
	if a >= float64(c) {
		return 0, fmt.Errorf("erlang C: offered load %g Erlangs saturates %d servers", a, c)
	}
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	cf := float64(c)
	return cf * b / (cf - a*(1-b)), nil
}

// MMcMeanWait is the mean time an arrival spends waiting (before service) in
// an M/M/c FCFS queue with arrival rate lambda and service rate mu per
// server: Wq = C(c, lambda/mu) / (c mu - lambda). Time units follow the rates.
func MMcMeanWait(lambda, mu float64, c int) (float64, error) {
	if mu <= 0 {
		return 0, fmt.Errorf("M/M/c: service rate must be positive, got %g", mu)
	}
	pw, err := ErlangC(c, lambda/mu)
	if err != nil {
		return 0, err
	}
	return pw / (float64(c)*mu - lambda), nil
}
