package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// The README's screenshots: where GPUPLAN_UPDATE_SCREENSHOTS=1 writes them.
const screenshotDir = "../../scenarios/examples/screenshots"

// hostWidth is the window a narrow page is shown in: headless Chromium's
// window is never under 500 CSS pixels, so a narrower viewport is an
// iframe of that width inside it.
const hostWidth = 500

// probe is a script added to a copy of a page: once the page has loaded,
// if it is wider than its viewport (a horizontal scroll bar on a phone),
// it pins a magenta square over the top left corner, so the screenshot
// itself says whether the page fits.
const probe = `<script>addEventListener("load",function(){if(document.documentElement.scrollWidth>window.innerWidth){` +
	`var b=document.createElement("div");b.style.cssText="position:fixed;left:0;top:0;width:120px;height:120px;background:#ff00ff;z-index:99999";` +
	`document.body.appendChild(b)}})</script>`

// overflowMark is the probe's square.
var overflowMark = color.NRGBA{0xff, 0x00, 0xff, 0xff}

// narrowShot shows a copy of page, probed, at width x height CSS pixels
// (inside an iframe of that size, in a window at least hostWidth wide)
// and returns the screenshot cropped to it.
func narrowShot(t *testing.T, bin, page string, width, height int) image.Image {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	base := fmt.Sprintf("%s-%d", strings.TrimSuffix(filepath.Base(page), ".html"), width)
	probed := filepath.Join(filepath.Dir(page), "probed-"+base+".html")
	require.NoError(t, os.WriteFile(probed, bytes.Replace(b, []byte("</body>"), []byte(probe+"</body>"), 1), 0o644))
	host := filepath.Join(filepath.Dir(page), "host-"+base+".html")
	require.NoError(t, os.WriteFile(host, []byte(fmt.Sprintf(`<!DOCTYPE html><html><head><style>body{margin:0}iframe{border:0;display:block;width:%dpx;height:%dpx}</style></head>
<body><iframe src="%s"></iframe></body></html>`, width, height, filepath.Base(probed))), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	shot := filepath.Join(dir, "shot.png")
	out, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"), "--virtual-time-budget=3000",
		fmt.Sprintf("--window-size=%d,%d", max(width, hostWidth), height), "--screenshot="+shot, "file://"+host).CombinedOutput()
	require.NoError(t, err, "%s", out)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	crop := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(crop, crop.Bounds(), img, image.Point{}, draw.Src)
	return crop
}

// screenshotPalette is the plots' series colours exactly, 64 greys, and
// the Plan 9 palette's colours up to 256.
func screenshotPalette() color.Palette {
	var p color.Palette
	for i := range 10 {
		p = append(p, reports.PlotColor(i))
	}
	for g := 0; g < 256; g += 4 {
		p = append(p, color.Gray{uint8(g)})
	}
	p = append(p, color.White)
	for _, c := range palette.Plan9 {
		if len(p) == 256 {
			break
		}
		p = append(p, c)
	}
	return p
}

// writeScreenshot writes img as a paletted PNG (screenshotPalette: a
// page of text and flat plots loses nothing a reader sees, and the file
// is a third of the size).
func writeScreenshot(t *testing.T, name string, img image.Image) {
	t.Helper()
	p := image.NewPaletted(img.Bounds(), screenshotPalette())
	draw.Draw(p, p.Bounds(), img, image.Point{}, draw.Src)
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	require.NoError(t, enc.Encode(&b, p))
	require.NoError(t, os.WriteFile(filepath.Join(screenshotDir, name), b.Bytes(), 0o644))
	t.Logf("wrote %s: %d bytes", name, b.Len())
}

// inked is the share of pixels that are not (near) white.
func inked(img image.Image) float64 {
	n, all := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				n++
			}
			all++
		}
	}
	return float64(n) / float64(all)
}

// The decision page, the report of a services-only run and the report of
// a run with variants, each at 1,400 and 390 CSS pixels wide: each fits
// its width (no page-wide horizontal scroll: wide tables scroll in their
// own box, plots scale) and renders (ink on the page, its plot colours
// present). GPUPLAN_UPDATE_SCREENSHOTS=1 writes them for the README.
func TestScreenshotsAtDesktopAndPhoneWidths(t *testing.T) {
	bin := browser()
	if bin == "" && os.Getenv("GPUPLAN_REQUIRE_BROWSER") != "" {
		t.Fatal("GPUPLAN_REQUIRE_BROWSER is set but no Chromium was found")
	}
	if bin == "" {
		t.Skip("no Chromium on this machine (set GPUPLAN_BROWSER): the screenshots were not taken")
	}
	update := os.Getenv("GPUPLAN_UPDATE_SCREENSHOTS") == "1"
	dir := t.TempDir()
	run := func(args ...string) {
		code, _, errOut := gpuplan(t, args...)
		require.Equal(t, 0, code, errOut)
	}
	run("sweep", "../../scenarios/examples/sweep/default-capacity.yaml", "--out", filepath.Join(dir, "sweep"), "--progress", "never")
	run("simulate", "../../scenarios/examples/inference/kserve-flash-sale/scenario.yaml", "--out", filepath.Join(dir, "services"), "--output", "json")
	run("simulate", "../../scenarios/examples/spot-what-if.yaml", "--out", filepath.Join(dir, "variants"), "--output", "json")
	pages := []struct {
		name, file string
		// colour is one the page must show at the top (the answer's
		// border; the first plot series).
		colour color.NRGBA
	}{
		{"decision", filepath.Join(dir, "sweep", reports.FileDecision), reports.PlotColor(0)},
		{"report-services", filepath.Join(dir, "services", reports.FileHTML), reports.PlotColor(0)},
		{"report-variants", filepath.Join(dir, "variants", reports.FileHTML), reports.PlotColor(0)},
	}
	// The probe itself: a page wider than the phone shows the square.
	wide := filepath.Join(dir, "wide.html")
	require.NoError(t, os.WriteFile(wide, []byte(`<!DOCTYPE html><html><body><div style="width:2000px">wide</div></body></html>`), 0o644))
	require.Greater(t, near(narrowShot(t, bin, wide, 390, 300), overflowMark), 10000, "the probe marks a page wider than the screen")

	t.Run("pages", func(t *testing.T) {
		for _, pg := range pages {
			for _, size := range []struct{ w, h int }{{1400, 1000}, {390, 1300}} {
				name := fmt.Sprintf("%s-%d.png", pg.name, size.w)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					img := narrowShot(t, bin, pg.file, size.w, size.h)
					ink, blue := inked(img), near(img, pg.colour)
					t.Logf("%s: %.1f%% inked, %d pixels of the first series colour", name, 100*ink, blue)
					assert.Zero(t, near(img, overflowMark), "%s: the page is wider than the screen", name)
					assert.Greater(t, ink, 0.03, "%s: a blank page", name)
					assert.Greater(t, blue, 40, name)
					if update {
						writeScreenshot(t, name, img)
					}
				})
			}
		}
	})
	if update {
		m, _ := filepath.Glob(filepath.Join(screenshotDir, "*.png"))
		var total int64
		for _, f := range m {
			st, err := os.Stat(f)
			require.NoError(t, err)
			total += st.Size()
		}
		t.Logf("screenshots: %d files, %d bytes", len(m), total)
		assert.Less(t, total, int64(600<<10), strings.Join(m, " "))
	}
}
