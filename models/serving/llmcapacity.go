package serving

import (
	"errors"
	"math"
)

// LLMCapacity is the highest request rate (per second) one replica
// serves in the fast model (SteadyLLM without ErrLLMOverload), found to
// within 0.5% by doubling and then bisection: where the mean decoding
// requests reach max_num_seqs or the cache's blocks, or the prompts
// arriving in a step pass the token budget. Beyond it a cluster run
// queues the excess (a backlog served at this rate).
func LLMCapacity(cfg LLMConfig, in, out TokenDist) (float64, error) {
	return capacityOf(func(rate float64) (bool, error) {
		_, err := SteadyLLM(cfg, rate, in, out)
		if errors.Is(err, ErrLLMOverload) {
			return false, nil
		}
		return err == nil, err
	})
}

// capacityOf is the highest rate that fits, to within 0.5%, by doubling
// from 1 and then bisection.
func capacityOf(fits func(rate float64) (bool, error)) (float64, error) {
	lo, hi := 0.0, 1.0
	for {
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
		if hi > 1e9 {
			return 0, errors.New("no overload up to 1e9 requests a second")
		}
	}
	if lo == 0 {
		// Below one a second: bisect down from it.
		for lo = hi / 2; ; lo /= 2 {
			ok, err := fits(lo)
			if err != nil {
				return 0, err
			}
			if ok {
				break
			}
			if lo < 1e-9 {
				return 0, errors.New("the replica serves no rate (one request does not fit its cache)")
			}
			hi = lo
		}
	}
	for hi-lo > 0.005*lo {
		mid := (lo + hi) / 2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if math.IsNaN(lo) {
		return 0, errors.New("no capacity")
	}
	return lo, nil
}
