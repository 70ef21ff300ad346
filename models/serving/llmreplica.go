package serving

import "fmt"

// llmOutcomes are the per-request state and results of a run, shared by
// the replicas that serve it (each touches only its own requests'
// entries).
type llmOutcomes struct {
	state           []llmReq
	ttft, tpot, e2e []float64
}

func newLLMOutcomes(n int) *llmOutcomes {
	return &llmOutcomes{state: make([]llmReq, n), ttft: make([]float64, n), tpot: make([]float64, n), e2e: make([]float64, n)}
}

type llmReq struct {
	i                   int
	in, out             int
	computed, generated int
	// blocks are the request's own cache blocks; shared the blocks of the
	// cached prefix it reads (held by the prefix's entry, not by it).
	blocks, shared int64
	firstMs        float64
}

// tokens is what the request's KV cache must hold before its next token.
func (r *llmReq) tokens() int { return r.in + r.generated }

// prefixEntry is a shared prefix's full blocks in one replica's cache:
// refs running requests read them; with none they stay cached until
// their blocks are needed, least recently used first (vLLM keeps a freed
// block's contents until the block is reallocated, oldest first).
type prefixEntry struct {
	id     int
	blocks int64
	refs   int
	seq    int64 // order of last use
}

// llmReplica is one engine serving the requests routed to it, stepped
// forward in time by advance (vLLM V1's scheduler: see SimulateLLM).
type llmReplica struct {
	cfg  *LLMConfig
	reqs []LLMRequest
	out  *llmOutcomes
	res  LLMResult
	// own are the requests routed here, in arrival order; next the first
	// not yet in the engine's queue.
	own     []int
	next    int
	waiting []*llmReq
	running []*llmReq
	free    int64
	t       float64
	done    int
	// lastDone counts the requests the last step finished (at t).
	lastDone int
	prefixes []*prefixEntry
	useSeq   int64
	batch    []llmSched
	step     Step
}

type llmSched struct {
	r *llmReq
	n int
}

func newLLMReplica(cfg *LLMConfig, reqs []LLMRequest, out *llmOutcomes) *llmReplica {
	blocks := cfg.Blocks()
	return &llmReplica{cfg: cfg, reqs: reqs, out: out, res: LLMResult{Blocks: blocks}, free: blocks}
}

// route gives request i to the replica; requests are routed in arrival
// order.
func (p *llmReplica) route(i int) { p.own = append(p.own, i) }

func (p *llmReplica) queued(i int) float64 { return p.reqs[i].ArrivalMs + p.cfg.RequestOverheadMs }

// outstanding is the requests routed here and not finished at time at
// (after advance(at): the last step may end after at).
func (p *llmReplica) outstanding(at float64) int {
	n := len(p.own) - p.done
	if p.t > at {
		n += p.lastDone
	}
	return n
}

// queueLen is the requests waiting for the engine at time at: its queue
// and those routed but not yet in it (vllm:num_requests_waiting).
func (p *llmReplica) queueLen() int { return len(p.waiting) + len(p.own) - p.next }

// entry is the replica's cached prefix id, or nil.
func (p *llmReplica) entry(id int) *prefixEntry {
	for _, e := range p.prefixes {
		if e.id == id {
			return e
		}
	}
	return nil
}

// reclaim evicts unreferenced cached prefixes, least recently used first,
// until need blocks are free or none is left to evict.
func (p *llmReplica) reclaim(need int64) {
	for need > p.free {
		k := -1
		for j, e := range p.prefixes {
			if e.refs == 0 && (k < 0 || e.seq < p.prefixes[k].seq) {
				k = j
			}
		}
		if k < 0 {
			return
		}
		p.free += p.prefixes[k].blocks
		p.prefixes = append(p.prefixes[:k], p.prefixes[k+1:]...)
	}
}

func (p *llmReplica) touch(e *prefixEntry) {
	p.useSeq++
	e.seq = p.useSeq
}

// hit starts r from its cached prefix when it has no tokens computed:
// the prefix's full blocks, at most the prompt less one token (vLLM
// recomputes the last token of a fully cached prompt to get its logits).
func (p *llmReplica) hit(r *llmReq) {
	q := p.reqs[r.i]
	if q.PrefixID == 0 || r.computed > 0 {
		return
	}
	e := p.entry(q.PrefixID)
	if e == nil {
		return
	}
	bs := int64(p.cfg.BlockSize)
	n := min(e.blocks, int64(r.in-1)/bs)
	if n <= 0 {
		return
	}
	e.refs++
	p.touch(e)
	r.shared = n
	r.computed = int(n * bs)
	p.res.PrefixHitTokens += n * bs
}

// release drops r's hold on its cached prefix.
func (p *llmReplica) release(r *llmReq) {
	if r.shared == 0 {
		return
	}
	if e := p.entry(p.reqs[r.i].PrefixID); e != nil {
		e.refs--
		p.touch(e)
	}
	r.shared = 0
}

// register caches r's prefix once its full blocks are computed and no
// entry holds it: the blocks pass from r to the entry, which r reads.
func (p *llmReplica) register(r *llmReq) {
	q := p.reqs[r.i]
	if q.PrefixID == 0 || r.shared > 0 {
		return
	}
	bs := int64(p.cfg.BlockSize)
	n := int64(q.PrefixTokens) / bs
	if n == 0 || int64(r.computed) < n*bs || p.entry(q.PrefixID) != nil {
		return
	}
	e := &prefixEntry{id: q.PrefixID, blocks: n, refs: 1}
	p.touch(e)
	p.prefixes = append(p.prefixes, e)
	r.blocks -= n
	r.shared = n
}

// need is the blocks r must add to hold n more tokens.
func (p *llmReplica) need(r *llmReq, n int) int64 {
	bs := int64(p.cfg.BlockSize)
	return (int64(r.computed+n)+bs-1)/bs - r.shared - r.blocks
}

// advance runs the steps that start before until; until = +Inf drains
// every request routed here.
func (p *llmReplica) advance(until float64) error {
	for {
		for p.next < len(p.own) && p.queued(p.own[p.next]) <= p.t {
			i := p.own[p.next]
			r := &p.out.state[i]
			*r = llmReq{i: i, in: p.reqs[i].Input, out: p.reqs[i].Output}
			if p.reqs[i].Prefilled {
				r.computed, r.generated, r.firstMs = r.in, 1, p.queued(i)
			}
			p.waiting = append(p.waiting, r)
			p.next++
		}
		if len(p.running) == 0 && len(p.waiting) == 0 {
			if p.next < len(p.own) && p.queued(p.own[p.next]) < until {
				p.t = p.queued(p.own[p.next])
				continue
			}
			return nil
		}
		if p.t >= until {
			return nil
		}
		if err := p.runStep(); err != nil {
			return err
		}
	}
}

// runStep schedules and runs one step at p.t.
func (p *llmReplica) runStep() error {
	cfg := p.cfg
	budget := cfg.MaxNumBatchedTokens * max(cfg.Engine.PP, 1)
	p.batch = p.batch[:0]
	preempted := 0
	for i := 0; i < len(p.running) && budget > 0; i++ {
		r := p.running[i]
		n := min(r.tokens()-r.computed, budget, cfg.MaxNumBatchedTokens)
		need := p.need(r, n)
		p.reclaim(need)
		self := false
		for need > p.free && !self {
			v := p.running[len(p.running)-1]
			p.running = p.running[:len(p.running)-1]
			p.free += v.blocks
			p.release(v)
			v.blocks, v.computed = 0, 0
			p.waiting = append(p.waiting, nil)
			copy(p.waiting[1:], p.waiting)
			p.waiting[0] = v
			preempted++
			self = v == r
			if !self {
				p.reclaim(need)
			}
		}
		if self {
			break
		}
		p.free -= need
		r.blocks += need
		p.batch = append(p.batch, llmSched{r, n})
		budget -= n
	}
	if preempted == 0 {
		for len(p.waiting) > 0 && budget > 0 && len(p.running) < cfg.MaxNumSeqs {
			r := p.waiting[0]
			p.hit(r)
			n := min(r.tokens()-r.computed, budget, cfg.MaxNumBatchedTokens)
			need := p.need(r, n)
			p.reclaim(need)
			if need > p.free {
				break
			}
			p.free -= need
			r.blocks += need
			p.waiting = p.waiting[1:]
			p.running = append(p.running, r)
			p.batch = append(p.batch, llmSched{r, n})
			budget -= n
		}
	}
	p.res.Preemptions += preempted
	if len(p.batch) == 0 {
		return fmt.Errorf("invariant: step at %.3f ms schedules nothing with %d running and %d waiting", p.t, len(p.running), len(p.waiting))
	}
	p.step.Prefill, p.step.Decode = p.step.Prefill[:0], p.step.Decode[:0]
	prefillTokens := 0
	for _, s := range p.batch {
		if s.n == 1 && s.r.generated > 0 && s.r.computed == s.r.tokens()-1 {
			p.step.Decode = append(p.step.Decode, s.r.computed+1)
		} else {
			p.step.Prefill = append(p.step.Prefill, Chunk{Tokens: s.n, Cached: s.r.computed})
			prefillTokens += s.n
		}
	}
	ms := cfg.Engine.StepTime(p.step)*1e3 + cfg.StepOverheadMs
	used := p.res.Blocks - p.free
	p.res.PeakBlocks = max(p.res.PeakBlocks, used)
	if cfg.RecordSteps {
		p.res.StepLog = append(p.res.StepLog, StepRecord{StartMs: p.t, Ms: ms, PrefillTokens: prefillTokens, Decodes: len(p.step.Decode),
			Running: len(p.running), Waiting: len(p.waiting), UsedBlocks: used, Preempted: preempted})
	}
	p.t += ms
	p.res.BusyMs += ms
	p.res.Steps++
	p.lastDone = 0
	for _, s := range p.batch {
		r := s.r
		r.computed += s.n
		p.register(r)
		if r.computed < r.tokens() {
			continue
		}
		r.generated++
		if r.generated == 1 {
			r.firstMs = p.t
		}
		if r.generated == r.out {
			a := p.reqs[r.i].ArrivalMs
			p.out.ttft[r.i] = r.firstMs - a + cfg.TokenOverheadMs
			p.out.e2e[r.i] = p.t - a + float64(r.out)*cfg.TokenOverheadMs + cfg.FinishOverheadMs
			if r.out > 1 {
				p.out.tpot[r.i] = (p.t-r.firstMs)/float64(r.out-1) + cfg.TokenOverheadMs
			}
			p.res.InputTokens += int64(r.in)
			p.res.OutputTokens += int64(r.out)
			p.free += r.blocks
			r.blocks = 0
			p.release(r)
			p.lastDone++
			p.done++
		}
	}
	if p.lastDone > 0 {
		kept := p.running[:0]
		for _, r := range p.running {
			if r.generated < r.out {
				kept = append(kept, r)
			}
		}
		p.running = kept
	}
	return nil
}

// result is the replica's LLMResult over the whole run's requests (the
// per-request slices are the run's, shared by every replica).
func (p *llmReplica) result() LLMResult {
	r := p.res
	r.TTFTMs, r.TPOTMs, r.E2EMs = p.out.ttft, p.out.tpot, p.out.e2e
	r.EndMs = p.t
	return r
}
