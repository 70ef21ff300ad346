package serving

import "fmt"

// Batch is a replica's batching and service-time model.
type Batch struct {
	// Size is the largest batch (TorchServe batch_size; 1 = no batching).
	Size int
	// MaxDelayMs is how long the oldest waiting request may wait for the
	// batch to fill (TorchServe max_batch_delay).
	MaxDelayMs float64
	// BaseMs and PerItemMs give a batch of n the service time
	// BaseMs + PerItemMs x n.
	BaseMs, PerItemMs float64
	// Exponential draws each batch's service time from an exponential with
	// that mean (the M/M/c and M/M/1 cases the tests hold to theory);
	// otherwise it is that time exactly.
	Exponential bool
}

// Validate refuses a model with no meaning: a batch size below 1, negative
// or zero-cost service.
func (b Batch) Validate() error {
	switch {
	case b.Size < 1:
		return fmt.Errorf("batchSize: must be at least 1, got %d", b.Size)
	case b.MaxDelayMs < 0:
		return fmt.Errorf("maxBatchDelay: must not be negative, got %g ms", b.MaxDelayMs)
	case b.BaseMs < 0 || b.PerItemMs < 0 || b.BaseMs+b.PerItemMs <= 0:
		return fmt.Errorf("service time: base %g ms and perItem %g ms must not be negative, and not both 0", b.BaseMs, b.PerItemMs)
	}
	return nil
}

// ServiceMs is the time a batch of n takes.
func (b Batch) ServiceMs(n int) float64 { return b.serviceOf(float64(n)) }

// Throughput is the requests per second one replica serves when every
// batch holds n.
func (b Batch) Throughput(n int) float64 { return float64(n) / b.ServiceMs(n) * 1000 }

// Capacity is one replica's most requests per second: every batch full.
func (b Batch) Capacity() float64 { return b.Throughput(b.Size) }
