package reports

import (
	"fmt"
	"math"
	"sort"
)

// Idle-distribution rules: how a showback spreads the cost no pod paid
// for (idle nodes, idle GPUs, CPU and memory no one requested) over the
// teams, as OpenCost's "share idle" options do.
const (
	// IdleByAllocation gives each team idle cost in proportion to what
	// its pods paid (OpenCost's weighted sharing; the default).
	IdleByAllocation = "allocation"
	// IdleEven splits idle cost evenly over the teams that ran anything.
	IdleEven = "even"
)

// Showback is the bill shown back to teams (queues, the namespaces of
// the LocalQueues): what their pods paid plus their share of idle cost,
// adding up to the whole bill to the cent.
type Showback struct {
	IdleDistribution string     `json:"idleDistribution"`
	Total            float64    `json:"total"`
	Teams            []TeamCost `json:"teams"`
}

// TeamCost is one team's line of the showback.
type TeamCost struct {
	Team      string  `json:"team"`
	Allocated float64 `json:"allocated"`
	IdleShare float64 `json:"idleShare"`
	Total     float64 `json:"total"`
	// Budget is the scenario's budget for the team over the run (0: none);
	// BudgetUsed the share of it the team's total takes.
	Budget     float64 `json:"budget,omitempty"`
	BudgetUsed float64 `json:"budgetUsed,omitempty"`
}

// ShowbackOf distributes a run's cost over its queues by the rule. Cents
// are apportioned by largest remainder, so the lines add up to the total
// to the cent.
func ShowbackOf(c *CostSummary, rule string, budgets map[string]float64) (*Showback, error) {
	switch rule {
	case "":
		rule = IdleByAllocation
	case IdleByAllocation, IdleEven:
	default:
		return nil, fmt.Errorf("idle distribution %q is not one of allocation, even", rule)
	}
	sb := &Showback{IdleDistribution: rule}
	total := cents(c.Total)
	var teams []string
	alloc := map[string]float64{}
	for _, q := range c.ByQueue {
		if q.Allocated > 0 {
			teams = append(teams, q.Name)
			alloc[q.Name] = q.Allocated
		}
	}
	for t := range budgets {
		if _, ok := alloc[t]; !ok {
			teams = append(teams, t)
			alloc[t] = 0
		}
	}
	sort.Strings(teams)
	if len(teams) == 0 {
		sb.Total = float64(total) / 100
		return sb, nil
	}
	allocWeights := make([]float64, len(teams))
	for i, t := range teams {
		allocWeights[i] = alloc[t]
	}
	var allocSum float64
	for _, a := range allocWeights {
		allocSum += a
	}
	allocCents := apportion(cents(allocSum), allocWeights)
	idle := total - sum(allocCents)
	idleWeights := make([]float64, len(teams))
	for i := range teams {
		switch {
		case rule == IdleEven && alloc[teams[i]] > 0:
			idleWeights[i] = 1
		case rule == IdleByAllocation:
			idleWeights[i] = allocWeights[i]
		}
	}
	idleCents := apportion(idle, idleWeights)
	for i, t := range teams {
		l := TeamCost{Team: t, Allocated: float64(allocCents[i]) / 100, IdleShare: float64(idleCents[i]) / 100,
			Total: float64(allocCents[i]+idleCents[i]) / 100, Budget: budgets[t]}
		if l.Budget > 0 {
			l.BudgetUsed = round(l.Total/l.Budget, 4)
		}
		sb.Teams = append(sb.Teams, l)
	}
	sb.Total = float64(total) / 100
	return sb, nil
}

func cents(x float64) int64 { return int64(math.Round(x * 100)) }

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// apportion divides n cents in proportion to the weights (largest
// remainder; ties to the earlier index); all-zero weights get nothing
// unless n is not zero, then an even split.
func apportion(n int64, w []float64) []int64 {
	out := make([]int64, len(w))
	var tot float64
	for _, x := range w {
		tot += x
	}
	if tot <= 0 {
		if n == 0 {
			return out
		}
		w = make([]float64, len(w))
		for i := range w {
			w[i] = 1
		}
		tot = float64(len(w))
	}
	type rem struct {
		i int
		r float64
	}
	rems := make([]rem, len(w))
	var given int64
	for i, x := range w {
		exact := float64(n) * x / tot
		out[i] = int64(math.Floor(exact))
		given += out[i]
		rems[i] = rem{i, exact - math.Floor(exact)}
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < n; k++ {
		out[rems[k%len(rems)].i]++
		given++
	}
	return out
}

func showbackHeader(sb *Showback) []string {
	h := []string{"team", "its pods paid", "share of idle", "showback"}
	if hasBudgets(sb) {
		h = append(h, "budget", "budget used")
	}
	return h
}

func hasBudgets(sb *Showback) bool {
	for _, t := range sb.Teams {
		if t.Budget > 0 {
			return true
		}
	}
	return false
}

func showbackRows(sb *Showback) [][]string {
	var rows [][]any
	for _, t := range sb.Teams {
		r := []any{t.Team, usd(t.Allocated), usd(t.IdleShare), usd(t.Total)}
		if hasBudgets(sb) {
			used := ""
			if t.Budget > 0 {
				used = fmt.Sprintf("%.1f%%", 100*t.BudgetUsed)
				if t.BudgetUsed > 1 {
					used += " (over)"
				}
			}
			r = append(r, usd(t.Budget), used)
		}
		rows = append(rows, r)
	}
	return columns(append(rows, []any{"all teams", "", "", usd(sb.Total)}))
}

func showbackText(sb *Showback) string {
	switch sb.IdleDistribution {
	case IdleEven:
		return "Idle cost (nodes, GPUs, CPU and memory no pod held) is split evenly over the teams that ran anything (pricing.idleDistribution: even)."
	}
	return "Idle cost (nodes, GPUs, CPU and memory no pod held) is shared in proportion to what each team's pods paid (pricing.idleDistribution: allocation, OpenCost's weighted sharing)."
}
