package scheduler

// ScoreEveryNode turns off scoring by state class, so a test can hold the
// two ways against each other.
func ScoreEveryNode(f *Framework) { f.byClass = false }

// ByClass reports whether the framework scores one node per state class.
func ByClass(f *Framework) bool { return f.byClass }
