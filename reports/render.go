package reports

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"
)

// NewPlot is a chart in the reports' style (title, axis labels, a grid,
// the legend top left), for other packages' charts (sweeps, recommend).
func NewPlot(title, x, y string) *plot.Plot { return newPlot(title, x, y) }

// SVG draws a chart at the reports' size as SVG. gonum/plot panics on some
// degenerate axes; that is returned as an error.
func SVG(p *plot.Plot) (svg []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot %s: %v", p.Title.Text, r)
		}
	}()
	w, err := p.WriterTo(plotWidth, plotHeight, "svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
