package reports

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The Pareto chart's geometry (SVG user units; the chart scales to the
// page's width).
const (
	svgW, svgH             = 760.0, 460.0
	svgLeft, svgRight      = 92.0, 20.0
	svgTop, svgBottom      = 16.0, 58.0
	svgFont                = 13.0
	svgCharW               = 7.4 // a label character's width at svgFont, roughly
	svgMark, svgMarkWinner = 5.0, 7.5
	svgLabelGap            = 4.0
	svgMaxLabelsPerGroup   = 4
	svgNiceTicks           = 5
)

func hexColor(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// niceTicks are about n round values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		// A step a little under the raw one: about n ticks, not n/2.
		if m*mag >= 0.75*raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		// + 0 turns -0 into 0: no "-0.00h" tick.
		out = append(out, math.Round(v/step)*step+0)
	}
	return out
}

// unitTicks are round values in the unit the axis is written in: whole
// hours on an axis written in hours, not whole thousands of seconds.
func unitTicks(unit string, a svgAxis) []float64 {
	scale := 1.0
	if unit == UnitSeconds {
		scale = map[string]float64{"s": 1, "m": 60, "h": 3600, "d": 86400}[DurationUnit(a.lo, a.hi)]
	}
	t := niceTicks(a.lo/scale, a.hi/scale, svgNiceTicks)
	for i := range t {
		t[i] *= scale
	}
	return t
}

type svgAxis struct{ lo, hi, from, to float64 }

func (a svgAxis) at(v float64) float64 { return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from) }

func axisOver(vals []float64, from, to float64) svgAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi == lo {
		pad := math.Max(math.Abs(lo)*0.1, 1e-9)
		lo, hi = lo-pad, hi+pad
	} else {
		pad := (hi - lo) * 0.06
		lo, hi = lo-pad, hi+pad
	}
	return svgAxis{lo, hi, from, to}
}

type svgBox struct{ x0, y0, x1, y1 float64 }

func (a svgBox) overlaps(b svgBox) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// paretoSVG draws the objective (x) against Metrics[ParetoY] (y): a mark
// per point, every mark labelled with its index (points at the same place
// share a label) and linked to its row, the front joined by a line, the
// answer in the fourth series colour, the bound of a constraint on y
// dashed.
func (d *Decision) paretoSVG(xc, yc column) string {
	my := d.ParetoY
	var xs, ys []float64
	for _, p := range d.Points {
		xs = append(xs, p.Stats[0].Mean)
		ys = append(ys, p.Stats[my].Mean)
	}
	var bounds []DecisionConstraint
	for _, c := range d.Constraints {
		if c.Metric == my {
			bounds = append(bounds, c)
			ys = append(ys, c.Bound)
		}
	}
	ax := axisOver(xs, svgLeft, svgW-svgRight)
	ay := axisOver(ys, svgH-svgBottom, svgTop)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" role="img" aria-label="%s against %s" font-family="system-ui,sans-serif" font-size="%s">`,
		f1(svgW), f1(svgH), html.EscapeString(d.Metrics[my].Name), html.EscapeString(d.Metrics[0].Name), f1(svgFont))
	b.WriteString("\n")
	// Axes, grid and ticks.
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#fff" stroke="#999"/>`+"\n",
		f1(svgLeft), f1(svgTop), f1(svgW-svgLeft-svgRight), f1(svgH-svgTop-svgBottom))
	tx := unitTicks(d.Metrics[0].Unit, ax)
	txf := unitColumn(d.Metrics[0].Unit, tx).f
	for _, v := range tx {
		x := ax.at(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/><text x="%s" y="%s" text-anchor="middle" fill="#333">%s</text>`+"\n",
			f1(x), f1(svgTop), f1(x), f1(svgH-svgBottom), f1(x), f1(svgH-svgBottom+16), html.EscapeString(txf(v)))
	}
	ty := unitTicks(d.Metrics[my].Unit, ay)
	tyf := unitColumn(d.Metrics[my].Unit, ty).f
	for _, v := range ty {
		y := ay.at(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/><text x="%s" y="%s" text-anchor="end" fill="#333">%s</text>`+"\n",
			f1(svgLeft), f1(y), f1(svgW-svgRight), f1(y), f1(svgLeft-6), f1(y+4), html.EscapeString(tyf(v)))
	}
	xl, yl := d.Metrics[0].Name, d.Metrics[my].Name
	if xc.unit != "" {
		xl += " (" + xc.unit + ")"
	}
	if yc.unit != "" {
		yl += " (" + yc.unit + ")"
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#222">%s</text>`+"\n", f1((svgLeft+svgW-svgRight)/2), f1(svgH-14), html.EscapeString(xl))
	fmt.Fprintf(&b, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle" fill="#222">%s</text>`+"\n", f1((svgTop+svgH-svgBottom)/2), html.EscapeString(yl))
	var taken []svgBox
	for _, c := range bounds {
		y := ay.at(c.Bound)
		w := float64(len(c.Text)) * svgCharW
		taken = append(taken, svgBox{svgW - svgRight - 4 - w, y - 4 - svgFont, svgW - svgRight - 4, y})
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="6 4"/><text x="%s" y="%s" text-anchor="end" fill="%s">%s</text>`+"\n",
			f1(svgLeft), f1(y), f1(svgW-svgRight), f1(y), hexColor(PlotColor(2)), f1(svgW-svgRight-4), f1(y-4), hexColor(PlotColor(2)), html.EscapeString(c.Text))
	}
	// The front.
	if len(d.Pareto) > 1 {
		var pts []string
		for _, i := range d.Pareto {
			pts = append(pts, f1(ax.at(d.Points[i].Stats[0].Mean))+","+f1(ay.at(d.Points[i].Stats[my].Mean)))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), hexColor(PlotColor(1)))
	}
	// Points at one place (to the pixel) share a mark and a label.
	type group struct {
		x, y    float64
		members []int
	}
	var groups []*group
	at := map[[2]float64]*group{}
	for i, p := range d.Points {
		k := [2]float64{math.Round(ax.at(p.Stats[0].Mean)), math.Round(ay.at(p.Stats[my].Mean))}
		g := at[k]
		if g == nil {
			g = &group{x: ax.at(p.Stats[0].Mean), y: ay.at(p.Stats[my].Mean)}
			at[k] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	// Marks first, the answer's last (on top); labels after, placed where
	// they cross no other label or mark.
	sort.SliceStable(groups, func(i, j int) bool { return d.hasWinner(groups[j].members) && !d.hasWinner(groups[i].members) })
	for _, g := range groups {
		r := svgMark
		fill, stroke := "#fff", hexColor(PlotColor(7))
		feasible := false
		for _, i := range g.members {
			feasible = feasible || d.Points[i].Feasible
		}
		if feasible {
			fill, stroke = hexColor(PlotColor(0)), hexColor(PlotColor(0))
		}
		if d.hasWinner(g.members) {
			r, fill, stroke = svgMarkWinner, hexColor(PlotColor(3)), hexColor(PlotColor(3))
		}
		first := d.Points[g.members[0]]
		fmt.Fprintf(&b, `<a href="#p-%d"><circle cx="%s" cy="%s" r="%s" fill="%s" stroke="%s" stroke-width="1.5"><title>#%d %s</title></circle></a>`+"\n",
			first.Index, f1(g.x), f1(g.y), f1(r), fill, stroke, first.Index, html.EscapeString(strings.Join(first.Settings, ", ")))
		taken = append(taken, svgBox{g.x - r, g.y - r, g.x + r, g.y + r})
	}
	for _, g := range groups {
		var parts []string
		for k, i := range g.members {
			if k == svgMaxLabelsPerGroup && len(g.members) > svgMaxLabelsPerGroup+1 {
				parts = append(parts, fmt.Sprintf(`<a href="#p-%d">+%d</a>`, d.Points[g.members[len(g.members)-1]].Index, len(g.members)-k))
				break
			}
			parts = append(parts, fmt.Sprintf(`<a href="#p-%d">#%d</a>`, d.Points[i].Index, d.Points[i].Index))
		}
		text := strings.Join(parts, " ")
		chars := 0
		for k, i := range g.members {
			if k == svgMaxLabelsPerGroup && len(g.members) > svgMaxLabelsPerGroup+1 {
				chars += 2 + len(strconv.Itoa(len(g.members)-k))
				break
			}
			chars += 2 + len(strconv.Itoa(d.Points[i].Index))
		}
		w, h := float64(chars)*svgCharW, svgFont
		// Right, left, above, below, then further out.
		var box svgBox
		var lx, ly float64
		placed := false
		for _, step := range []float64{0, 1, 2, 3} {
			off := svgMarkWinner + svgLabelGap + step*h
			for _, c := range [][2]float64{{g.x + off, g.y + h/2 - 2}, {g.x - off - w, g.y + h/2 - 2}, {g.x - w/2, g.y - off}, {g.x - w/2, g.y + off + h - 2}} {
				bx := svgBox{c[0], c[1] - h + 2, c[0] + w, c[1] + 2}
				if bx.x0 < svgLeft+1 || bx.x1 > svgW-svgRight-1 || bx.y0 < svgTop+1 || bx.y1 > svgH-svgBottom-1 {
					continue
				}
				free := true
				for _, t := range taken {
					if bx.overlaps(t) {
						free = false
						break
					}
				}
				if free {
					box, lx, ly, placed = bx, c[0], c[1], true
					break
				}
			}
			if placed {
				break
			}
		}
		if !placed {
			lx, ly = math.Min(g.x+svgMarkWinner+svgLabelGap, svgW-svgRight-w-1), g.y+h/2-2
			box = svgBox{lx, ly - h + 2, lx + w, ly + 2}
		}
		taken = append(taken, box)
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#222">%s</text>`+"\n", f1(lx), f1(ly), text)
	}
	b.WriteString("</svg>")
	return b.String()
}

func (d *Decision) hasWinner(members []int) bool {
	for _, i := range members {
		if i == d.Winner {
			return true
		}
	}
	return false
}
