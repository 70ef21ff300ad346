package traces

import (
	"slices"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Counting a text through a view of a buffer that is then reused keeps
// the text as it was: m[view]++ on a Go map would store the view as the
// key and let the next row overwrite it.
func TestTextCountsKeepTheirKeys(t *testing.T) {
	buf := []byte("Running")
	m := textCounts{}
	m.add(view(buf))
	m.add(view(buf)) // the second time through a lookup only
	copy(buf, "XXXXXXX")
	if got := m.String(); got != "Running 2" {
		t.Errorf("counts %q, want \"Running 2\"", got)
	}
}

// The openb replay's note of pod phases: counted independently with awk
// over the CSV's pod_phase column (awk -F, 'NR>1{c[$8]++}').
func TestOpenbPhaseNote(t *testing.T) {
	tr, err := OpenTrace("../../testdata/openb/openb_pod_list_default.csv", FormatOpenb, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var j cluster.JobSpec
	for {
		ok, err := tr.Next(&j)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
	}
	want := "openb: pod phases in the source: Failed 1870, Pending 897, Running 5193, Succeeded 192"
	if !slices.ContainsFunc(tr.Notes(), func(n string) bool { return strings.Contains(n, want) }) {
		t.Errorf("notes %q\nlack %q", tr.Notes(), want)
	}
}
