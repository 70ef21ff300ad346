package compose

// Shrink takes pieces away from a failing composition while it still
// fails the same way (fails reports whether a candidate does), one piece
// at a time, until no single piece can go: a 1-minimal composition in
// the sense of delta debugging, over pools, NodePools, classes, services,
// CronJobs, the policy and its pieces, each pool's and class's features,
// the horizon and the job count. The seed is kept. It returns the shrunk
// composition and how many candidates it ran.
func Shrink(c *Composition, fails func(*Composition) bool) (*Composition, int) {
	cur, tried := c, 0
	for {
		progress := false
		for i := 0; ; i++ {
			cands := candidates(cur)
			if i >= len(cands) {
				break
			}
			tried++
			if fails(cands[i]) {
				cur, progress = cands[i], true
				i-- // the list changed under i: look at what is now there
			}
		}
		if !progress {
			return cur, tried
		}
	}
}

// candidates are the compositions one step smaller than c, biggest steps
// first.
func candidates(c *Composition) []*Composition {
	var out []*Composition
	with := func(f func(d *Composition)) {
		d := c.clone()
		f(d)
		out = append(out, d)
	}
	// Whole pieces.
	for i := range c.Pools {
		with(func(d *Composition) { d.Pools = append(d.Pools[:i], d.Pools[i+1:]...) })
	}
	for i := range c.NodePools {
		with(func(d *Composition) { d.NodePools = append(d.NodePools[:i], d.NodePools[i+1:]...) })
	}
	for i := range c.Classes {
		with(func(d *Composition) { d.Classes = append(d.Classes[:i], d.Classes[i+1:]...) })
	}
	for i := range c.CronJobs {
		with(func(d *Composition) { d.CronJobs = append(d.CronJobs[:i], d.CronJobs[i+1:]...) })
	}
	for i := range c.Services {
		with(func(d *Composition) { d.Services = append(d.Services[:i], d.Services[i+1:]...) })
	}
	if c.Policy != nil {
		with(func(d *Composition) { d.Policy = nil })
	}
	// The run's length: fewer jobs, a shorter horizon, none.
	if c.Jobs > 1 {
		with(func(d *Composition) { d.Jobs /= 2 })
		with(func(d *Composition) { d.Jobs-- })
	}
	switch c.Horizon {
	case "24h":
		with(func(d *Composition) { d.Horizon = "8h" })
	case "8h":
		with(func(d *Composition) { d.Horizon = "3h" })
	}
	for i := range c.Variants {
		with(func(d *Composition) { d.Variants = append(d.Variants[:i], d.Variants[i+1:]...) })
	}
	// Features of the whole.
	flag := func(on bool, off func(d *Composition)) {
		if on {
			with(off)
		}
	}
	flag(c.Sensitivity, func(d *Composition) { d.Sensitivity = false })
	flag(c.Preemption, func(d *Composition) { d.Preemption = false })
	flag(c.Checkpoint, func(d *Composition) { d.Checkpoint = false })
	flag(c.IgnoreDisruptions, func(d *Composition) { d.IgnoreDisruptions = false })
	flag(c.Volcano != nil, func(d *Composition) { d.Volcano = nil })
	flag(c.Backfill, func(d *Composition) { d.Backfill = false })
	flag(c.Trace, func(d *Composition) { d.Trace = false })
	flag(c.Busy, func(d *Composition) { d.Busy = false })
	if p := c.Policy; p != nil {
		flag(p.Cohort, func(d *Composition) { d.Policy.Cohort, d.Policy.CohortQuota, d.Policy.FairSharing = false, 0, false })
		flag(p.CohortQuota > 0, func(d *Composition) { d.Policy.CohortQuota = 0 })
		flag(p.Preemption, func(d *Composition) { d.Policy.Preemption = false })
		flag(p.FairSharing, func(d *Composition) { d.Policy.FairSharing = false })
		flag(p.WaitForPodsReady, func(d *Composition) { d.Policy.WaitForPodsReady = false })
		flag(p.StrictFIFO, func(d *Composition) { d.Policy.StrictFIFO = false })
		flag(p.Flavors, func(d *Composition) { d.Policy.Flavors = false })
		flag(p.BatchClass, func(d *Composition) { d.Policy.BatchClass = false })
		for i, q := range p.Queues {
			flag(q.BorrowingLimit >= 0, func(d *Composition) { d.Policy.Queues[i].BorrowingLimit = -1 })
		}
	}
	// Features of each piece.
	for i, p := range c.Pools {
		flag(p.Count > 1, func(d *Composition) { d.Pools[i].Count = 1 })
		flag(p.MaxNodes > 0, func(d *Composition) { d.Pools[i].MaxNodes = 0 })
		flag(p.Failures != "", func(d *Composition) { d.Pools[i].Failures = "" })
		flag(p.Failures != "" && p.Failures != "20h", func(d *Composition) { d.Pools[i].Failures = "20h" })
		flag(p.MIGSingle != "", func(d *Composition) { d.Pools[i].MIGSingle = "" })
		flag(p.Kind == "spot", func(d *Composition) { d.Pools[i].Kind, d.Pools[i].Interruptions = "on-demand", nil })
		flag(p.Kind == "mig" || p.Kind == "time-sliced", func(d *Composition) {
			d.Pools[i].Kind, d.Pools[i].InstanceType, d.Pools[i].Replicas = "on-demand", "g5.12xlarge", 0
		})
		if in := p.Interruptions; in != nil {
			flag(in.Notice != "", func(d *Composition) { d.Pools[i].Interruptions.Notice = "" })
			flag(in.Model != "mtbf", func(d *Composition) {
				*d.Pools[i].Interruptions = Interruptions{Model: "mtbf", Value: "3h", Notice: in.Notice}
			})
		}
	}
	for i, n := range c.NodePools {
		flag(n.Spot, func(d *Composition) { d.NodePools[i].Spot, d.NodePools[i].Interruptions = false, nil })
		flag(n.Consolidation, func(d *Composition) { d.NodePools[i].Consolidation = false })
		flag(n.Failures != "", func(d *Composition) { d.NodePools[i].Failures = "" })
		flag(len(n.InstanceTypes) > 1, func(d *Composition) { d.NodePools[i].InstanceTypes = n.InstanceTypes[:1:1] })
	}
	for i, cl := range c.Classes {
		flag(cl.Replicas > 1, func(d *Composition) { d.Classes[i].Replicas = 1 })
		flag(cl.GPUs > 1, func(d *Composition) { d.Classes[i].GPUs = 1 })
		flag(cl.Priority != 0, func(d *Composition) { d.Classes[i].Priority = 0 })
		flag(cl.PreemptNever, func(d *Composition) { d.Classes[i].PreemptNever = false })
		flag(cl.MIG != "", func(d *Composition) { d.Classes[i].MIG = "" })
		flag(cl.Pool != "", func(d *Composition) { d.Classes[i].Pool = "" })
	}
	for i, s := range c.Services {
		flag(s.Scaler != "none", func(d *Composition) { d.Services[i].Scaler = "none" })
		flag(s.Max > 1, func(d *Composition) { d.Services[i].Max = 1 })
		flag(s.Priority != 0, func(d *Composition) { d.Services[i].Priority, d.Services[i].PriorityClass = 0, false })
		flag(s.PriorityClass, func(d *Composition) { d.Services[i].PriorityClass = false })
	}
	for i, cj := range c.CronJobs {
		flag(cj.Parallelism > 1, func(d *Composition) { d.CronJobs[i].Parallelism = 1 })
	}
	return out
}
