package kueue

// openRandom are the random policies (TestKueueRandom) on which gpuplan and
// Kueue still differ, not yet diagnosed: listed so that the check stays a
// ratchet (a new difference fails; a listed case that starts agreeing
// fails until it is taken off). Measured December 2026 after the two
// sim/admission fixes of issue 26: 73 of 197 compared policies.
var openRandom = []string{
	"r002", "r003", "r005", "r006", "r008", "r015", "r016", "r017", "r019", "r022",
	"r026", "r027", "r029", "r031", "r033", "r036", "r043", "r055", "r056", "r057",
	"r058", "r059", "r060", "r065", "r068", "r073", "r074", "r075", "r078", "r085",
	"r089", "r090", "r092", "r095", "r097", "r099", "r103", "r107", "r110", "r112",
	"r114", "r119", "r120", "r124", "r125", "r126", "r127", "r128", "r130", "r133",
	"r135", "r136", "r138", "r141", "r142", "r145", "r150", "r151", "r164", "r167",
	"r171", "r173", "r174", "r178", "r179", "r180", "r181", "r182", "r185", "r189",
	"r195", "r196", "r199",
}

func init() {
	for _, n := range openRandom {
		knownDivergent[n] = "open: gpuplan differs from Kueue here, not yet diagnosed (issue 26)"
	}
}
