package reports

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pageText is a page's text as a reader sees it: tags out, entities read,
// white space collapsed.
func pageText(b []byte) string {
	s := regexp.MustCompile(`(?s)<(style|title)>.*?</(style|title)>`).ReplaceAllString(string(b), "")
	s = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, " ")
	s = html.UnescapeString(s)
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer(" ,", ",", " :", ":", " .", ".").Replace(s)
}

// Three settings of one pool, the p95 wait bounded at an hour:
//
//	#0  2 nodes  $200  wait 2.00 h [1.50, 2.50]   misses: 1.00 h over the bound
//	#1  3 nodes  $300  wait 0.75 h [0.50, 1.00]   the answer: margin 0.25 h [0.00, 0.50]
//	#2  4 nodes  $400  wait 0.33 h [-0.17, 0.83]  runner-up: $100 more, 100/300 = 33.3%
//
// (#2's interval, negative below, is shown from 0.00h.)
func threeSettings() *Decision {
	return &Decision{Command: "sweep", Name: "pool", Parameters: []string{"nodes"},
		Metrics:     []DecisionMetric{{Name: "cost.total", Unit: UnitUSD}, {Name: "wait.p95", Unit: UnitSeconds}},
		Constraints: []DecisionConstraint{{Text: "wait.p95 <= 1h", Metric: 1, AtMost: true, Bound: 3600}},
		Points: []DecisionPoint{
			{Index: 0, Settings: []string{"2"}, Seeds: 3, Stats: []Interval{{200, 200, 200}, {7200, 5400, 9000}}},
			{Index: 1, Settings: []string{"3"}, Seeds: 3, Feasible: true, Stats: []Interval{{300, 300, 300}, {2700, 1800, 3600}}},
			{Index: 2, Settings: []string{"4"}, Seeds: 3, Feasible: true, Stats: []Interval{{400, 400, 400}, {1200, -600, 3000}}},
		},
		Winner: 1, RunnerUp: 2, Pareto: []int{0, 1, 2}, ParetoY: 1, Method: "Three settings."}
}

func TestDecisionPageLeadsWithTheAnswer(t *testing.T) {
	d := threeSettings()
	b, err := d.HTML()
	require.NoError(t, err)
	again, err := d.HTML()
	require.NoError(t, err)
	require.Equal(t, b, again, "the same decision, the same bytes")
	text := pageText(b)

	// The answer, before anything else the page says.
	answer := strings.Index(text, "#1: nodes = 3")
	require.GreaterOrEqual(t, answer, 0, text)
	require.Less(t, answer, strings.Index(text, "Pareto front"))
	require.Contains(t, text, "cost.total: $300.00")
	// Its margin: 1 h - 0.75 h = 0.25 h; interval 1 h - [0.50, 1.00] h.
	require.Contains(t, text, "wait.p95 <= 1h 0.75h [0.50h, 1.00h] <= 1.00h 0.25h [0.00h, 0.50h] met with 95% confidence")
	// The runner-up and why it lost; the cheaper setting and what it missed.
	require.Contains(t, text, "#2: nodes = 4, cost.total $400.00: it meets every constraint too but costs $100.00 more (33.3%)")
	require.Contains(t, text, "#0: nodes = 2, cost.total $200.00: misses wait.p95 <= 1h at 2.00h [1.50h, 2.50h], 1.00h over the bound")
	// No negative wait.
	require.Contains(t, text, "0.33h [0.00h, 0.83h]")
	require.NotContains(t, text, "-0.17h")
	// Sensitivity along nodes: -$100 and +$100 from the answer.
	require.Contains(t, text, "2 $200.00 -$100.00 (-33.3%) misses wait.p95 <= 1h 3 $300.00 the answer 4 $400.00 +$100.00 (+33.3%) meets every constraint")

	// Every point is a mark and a label on the chart, linked to its row.
	page := string(b)
	svg := page[strings.Index(page, "<svg"):strings.Index(page, "</svg>")]
	for _, i := range []string{"0", "1", "2"} {
		require.Contains(t, svg, `<a href="#p-`+i+`"><circle`, i)
		require.Contains(t, svg, `<a href="#p-`+i+`">#`+i+`</a>`, i)
		require.Contains(t, page, `<tr id="p-`+i+`"`, i)
	}
	require.Contains(t, svg, "<polyline", "the front")
	for _, bad := range []string{"<script", "<link", "src=\"http", "e+0"} {
		require.NotContains(t, page, bad)
	}
	require.Contains(t, page, `<meta name="viewport"`)
}

func TestDecisionPageTieAndNoAnswer(t *testing.T) {
	d := threeSettings()
	d.Points[2].Stats[0] = Interval{300, 300, 300}
	b, err := d.HTML()
	require.NoError(t, err)
	require.Contains(t, pageText(b), "#2: nodes = 4, cost.total $300.00: it meets every constraint too and has the same cost.total ($300.00); a tie goes to the setting listed first")

	d = threeSettings()
	d.Winner, d.RunnerUp = -1, -1
	for i := range d.Points {
		d.Points[i].Feasible = false
	}
	b, err = d.HTML()
	require.NoError(t, err)
	text := pageText(b)
	require.Contains(t, text, "No setting run meets every constraint.")
	require.Contains(t, text, "No answer to move around.")
}

func TestNiceTicksAreRoundInTheAxisUnit(t *testing.T) {
	require.Equal(t, []float64{0, 5, 10, 15, 20}, niceTicks(-0.3, 21, 5))
	// 0.2 h to 25.9 h: whole multiples of 5 hours, in seconds.
	require.Equal(t, []float64{18000, 36000, 54000, 72000, 90000}, unitTicks(UnitSeconds, svgAxis{lo: 700, hi: 93250}))
}
