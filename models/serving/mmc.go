package serving

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
)

// MMc is c replicas sharing one FCFS queue, Poisson arrivals at Lambda per
// second and exponential service at Mu per second per replica.
type MMc struct {
	Lambda, Mu float64
	C          int
}

func (q MMc) check() (pw, theta float64, err error) {
	if !(q.Lambda > 0) || !(q.Mu > 0) {
		return 0, 0, fmt.Errorf("M/M/c: rates must be positive (lambda %g, mu %g)", q.Lambda, q.Mu)
	}
	pw, err = models.ErlangC(q.C, q.Lambda/q.Mu)
	return pw, float64(q.C)*q.Mu - q.Lambda, err
}

// Utilization is lambda / (c mu).
func (q MMc) Utilization() float64 { return q.Lambda / (float64(q.C) * q.Mu) }

// MeanWait is the mean time in the queue, seconds: C / (c mu - lambda).
func (q MMc) MeanWait() (float64, error) {
	pw, theta, err := q.check()
	return pw / theta, err
}

// WaitQuantile is the p-quantile of the time in the queue, seconds: 0 when
// at least p of arrivals find a free replica, else ln(C / (1-p)) / (c mu -
// lambda).
func (q MMc) WaitQuantile(p float64) (float64, error) {
	pw, theta, err := q.check()
	if err != nil {
		return 0, err
	}
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("quantile must be in (0, 1), got %g", p)
	}
	if 1-p >= pw {
		return 0, nil
	}
	return math.Log(pw/(1-p)) / theta, nil
}

// ResponseSurvival is P(T > t) for the time in the system T = W + S
// (seconds): (1-C) e^{-mu t} + C P(Exp(theta) + Exp(mu) > t).
func (q MMc) ResponseSurvival(t float64) (float64, error) {
	pw, theta, err := q.check()
	if err != nil {
		return 0, err
	}
	mu := q.Mu
	var both float64
	if math.Abs(theta-mu) < 1e-12*mu {
		both = (1 + mu*t) * math.Exp(-mu*t) // Erlang-2
	} else {
		both = (theta*math.Exp(-mu*t) - mu*math.Exp(-theta*t)) / (theta - mu)
	}
	return (1-pw)*math.Exp(-mu*t) + pw*both, nil
}

// ResponseQuantile is the p-quantile of the time in the system, seconds,
// by bisection on ResponseSurvival.
func (q MMc) ResponseQuantile(p float64) (float64, error) {
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("quantile must be in (0, 1), got %g", p)
	}
	if _, _, err := q.check(); err != nil {
		return 0, err
	}
	lo, hi := 0.0, 1/q.Mu
	for {
		s, _ := q.ResponseSurvival(hi)
		if s <= 1-p {
			break
		}
		hi *= 2
	}
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if s, _ := q.ResponseSurvival(mid); s > 1-p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}
