package main

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// browser finds a headless-capable Chromium: $GPUPLAN_BROWSER, else the
// usual names on PATH.
func browser() string {
	if b := os.Getenv("GPUPLAN_BROWSER"); b != "" {
		return b
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// screenshot opens page in headless Chromium in a window width CSS
// pixels wide (Chromium's headless window is at least 500 wide: see
// narrowShot for less) and decodes the screenshot.
func screenshot(t *testing.T, bin, page, shot string, width int) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir="+filepath.Join(t.TempDir(), "profile"),
		"--force-device-scale-factor=1", "--window-size="+strconv.Itoa(width)+",2200", "--screenshot="+shot, "file://"+page)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	f, err := os.Open(shot)
	require.NoError(t, err, "%s", out)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

// near counts the pixels within a small distance of c.
func near(img image.Image, c color.NRGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := func(a uint32, b uint8) int {
				v := int(a>>8) - int(b)
				if v < 0 {
					return -v
				}
				return v
			}
			if d(r, c.R) <= 12 && d(g, c.G) <= 12 && d(bl, c.B) <= 12 {
				n++
			}
		}
	}
	return n
}

// The HTML report opens in a real browser and its plots render: the
// screenshot holds the plots' series colours in quantity, and the same page
// with its images taken out holds almost none (the page's own styles use
// only greys).
func TestHTMLReportRendersInChromium(t *testing.T) {
	bin := browser()
	if bin == "" && os.Getenv("GPUPLAN_REQUIRE_BROWSER") != "" {
		t.Fatal("GPUPLAN_REQUIRE_BROWSER is set but no Chromium was found")
	}
	if bin == "" {
		t.Skip("no Chromium on this machine (install Debian's chromium, as .ci/run does, or set GPUPLAN_BROWSER): the HTML report was not opened in a browser")
	}
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	page := filepath.Join(dir, reports.FileHTML)
	html, err := os.ReadFile(page)
	require.NoError(t, err)

	img := screenshot(t, bin, page, filepath.Join(dir, "shot.png"), 1280)
	blue, orange := near(img, reports.PlotColor(0)), near(img, reports.PlotColor(1))
	t.Logf("screenshot %v: %d pixels of the first series colour, %d of the second", img.Bounds().Size(), blue, orange)
	// The cost plot's useful-spend bar alone is about 90x120 screen pixels
	// of the first colour (16,000 in all when written); the bare page
	// below has under 200.
	assert.Greater(t, blue, 5000, "first series colour (allocation lines, CDF lines, cost bars)")
	assert.Greater(t, orange, 1000, "second series colour")

	bare := regexp.MustCompile(`src="data:image/png;base64,[^"]*"`).ReplaceAll(html, []byte(`src=""`))
	barePage := filepath.Join(dir, "bare.html")
	require.NoError(t, os.WriteFile(barePage, bare, 0o644))
	img = screenshot(t, bin, barePage, filepath.Join(dir, "bare.png"), 1280)
	assert.Less(t, near(img, reports.PlotColor(0)), 200, "without its images the page has no plot colour")
}

// The report needs nothing beside it: no external scripts, styles or
// images; every plot is inlined and every figure of the summary is there.
func TestHTMLReportSelfContained(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(filepath.Join(dir, reports.FileHTML))
	require.NoError(t, err)
	html := string(b)
	for _, bad := range []string{`src="http`, `href="http`, `<script`, `<link`, `url(`} {
		assert.NotContains(t, html, bad)
	}
	for _, name := range []string{"allocation", "queue", "wait-cdf", "jct-cdf", "cost"} {
		assert.Contains(t, html, `id="plot-`+name+`"><img src="data:image/png;base64,`, name)
		for _, ext := range []string{".png", ".svg"} {
			st, err := os.Stat(filepath.Join(dir, reports.DirPlots, name+ext))
			require.NoError(t, err)
			assert.Greater(t, st.Size(), int64(2000), name+ext)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, reports.DirPlots, "allocation.svg"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(svg), "<?xml") || strings.HasPrefix(string(svg), "<svg"))
	s := readSummary(t, dir)
	assert.Contains(t, html, "<td>h100-train</td>")
	assert.Contains(t, html, ">77.1%<", "the cluster's allocation KPI")
	assert.Contains(t, html, reports.Human(s.QueueWait.P95))
	assert.Equal(t, 1, strings.Count(html, "<h2>Cost (USD)</h2>"))
}

// A run with inference services renders their plots in the browser: with
// the other plots' images taken out, the page holds the replicas held and
// ready (the third and fourth series colours) and the SLO line in
// quantity; with the services' images taken out too, almost none.
func TestHTMLReportServicePlotsRender(t *testing.T) {
	bin := browser()
	if bin == "" {
		t.Skip("no Chromium on this machine (set GPUPLAN_BROWSER): the services' plots were not opened in a browser")
	}
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "../../scenarios/kube/manifests/testdata/scenarios/services.yaml", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	html, err := os.ReadFile(filepath.Join(dir, reports.FileHTML))
	require.NoError(t, err)
	for _, name := range []string{"bert", "bert-keda", "recommender"} {
		require.Contains(t, string(html), `id="plot-service-`+name+`"`)
		require.Contains(t, string(html), `id="plot-service-`+name+`-latency"`)
	}
	img := regexp.MustCompile(`<figure id="plot-([^"]*)"([^>]*)><img src="data:image/png;base64,[^"]*"`)
	strip := func(keep func(name string) bool) string {
		return img.ReplaceAllStringFunc(string(html), func(m string) string {
			sub := img.FindStringSubmatch(m)
			if keep(sub[1]) {
				return m
			}
			return `<figure id="plot-` + sub[1] + `"` + sub[2] + `><img src=""`
		})
	}
	count := func(name, page string) int {
		p := filepath.Join(dir, name+".html")
		require.NoError(t, os.WriteFile(p, []byte(page), 0o644))
		shot := screenshot(t, bin, p, filepath.Join(dir, name+".png"), 1280)
		return near(shot, reports.PlotColor(2)) + near(shot, reports.PlotColor(3))
	}
	services := count("services", strip(func(n string) bool { return strings.HasPrefix(n, "service-") }))
	none := count("none", strip(func(string) bool { return false }))
	t.Logf("third and fourth series colours: %d pixels with the service plots alone, %d with no plot", services, none)
	// 2,084 when written (three services, two plots each; the lines are thin).
	assert.Greater(t, services, 1000, "the service plots' replica and SLO lines")
	assert.Less(t, none, 200)
}
