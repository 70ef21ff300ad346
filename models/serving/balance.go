package serving

import "fmt"

// Balancing is how a service's requests reach its replicas.
type Balancing int

const (
	// LeastRequest: one shared queue in front of the replicas, a request
	// going to the first replica free (Knative's activator with a
	// containerConcurrency, close to Envoy or Istio least-request). Batches
	// form from the service's total rate; without batching it is M/M/c
	// (Erlang C). The zero value.
	LeastRequest Balancing = iota
	// Random: each request goes to a ready replica chosen at random
	// (kube-proxy in iptables mode behind a Kubernetes Service), which
	// queues and batches its own. By Poisson splitting each replica sees
	// Poisson(lambda/c) and fills its batches c times slower; without
	// batching it is c independent M/M/1 queues.
	Random
)

func (b Balancing) String() string {
	if b == Random {
		return "random"
	}
	return "leastRequest"
}

// ParseBalancing reads "random" or "leastRequest".
func ParseBalancing(s string) (Balancing, error) {
	switch s {
	case "random":
		return Random, nil
	case "leastRequest":
		return LeastRequest, nil
	}
	return 0, fmt.Errorf("balancing: %q is neither random nor leastRequest", s)
}

// BalancedCycle is FluidCycle for c replicas balanced by mode. With
// LeastRequest it is FluidCycle(lambda, c, b). With Random every replica
// is the same independent queue at lambda/c: the cycle is one replica's,
// FluidCycle(lambda/c, 1, b), with Served the service's (c times one
// replica's); IntervalMs is then one replica's gathering.
func BalancedCycle(lambda float64, c int, b Batch, mode Balancing) (Cycle, error) {
	if mode != Random || c <= 1 {
		return FluidCycle(lambda, c, b)
	}
	cy, err := FluidCycle(lambda/float64(c), 1, b)
	cy.Served *= float64(c)
	return cy, err
}
