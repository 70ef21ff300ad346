// Package skypilot reads spot capacity traces in the format of SkyPilot's
// spot-traces (github.com/skypilot-org/spot-traces, collected for "Can't
// Be Late", Wu et al., NSDI '24): a JSON object
//
//	{"metadata": {"gap_seconds": 300}, "data": [4, 4, 3, 0, ...]}
//
// where data[i] is how many spot instances were held at tick i, gap_seconds
// apart. The repository has two kinds, read alike: availability traces (a
// launch of 1 or 16 instances tried every tick: how many the cloud gave)
// and preemption traces (1 or 4 instances kept running and relaunched:
// how many were alive). Either is what the cloud let a spot pool hold over
// time; Nodes scales it to a pool of another size.
package skypilot
