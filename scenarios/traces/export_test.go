package traces

// Internals for package traces_test (generated_test.go), whose tests
// generate traces with the scenarios package, which imports this one.
var (
	OpenTraceRaw   = openTraceRaw
	ShuffleRows    = shuffleRows
	ByTimeThenName = byTimeThenName
	SortToBytes    = sortToBytes
	ReadAll        = readAll
	SortedNote     = sortedNote
	BenchPerRow    = benchPerRow
	BenchDrain     = benchDrain
)

// SortedDir is the temporary folder of a trace replayed sorted first
// (false for one replayed as read).
func SortedDir(src TraceSource) (string, bool) {
	s, ok := src.(*sortedTrace)
	if !ok {
		return "", false
	}
	return s.dir, true
}
