package models

import (
	"fmt"
	"math"
)

// Spot interruption bands of the AWS Spot Instance Advisor: the share of
// instances of a type interrupted in the trailing month.
// Each band is read as a monthly interruption probability: its upper edge
// (>20% is read as 25%).
type spotBand struct {
	label   string
	monthly float64
}

func spotBands() [5]spotBand {
	return [5]spotBand{{"<5%", 0.05}, {"5-10%", 0.10}, {"10-15%", 0.15}, {"15-20%", 0.20}, {">20%", 0.25}}
}

// SpotBandLabels lists the Spot Advisor band labels, lowest first.
func SpotBandLabels() []string {
	bands := spotBands()
	out := make([]string, len(bands))
	for i, b := range bands {
		out[i] = b.label
	}
	return out
}

// HoursPerMonth is the month the Spot Advisor's trailing window is read as.
const HoursPerMonth = 720

// SpotBandRate converts a Spot Advisor band (its label or index 0-4) into
// an exponential interruption rate per node-hour: a monthly probability p
// (the band's upper edge) gives lambda = -ln(1-p)/720 h. It also returns the
// assumption in words, for the report.
func SpotBandRate(band string) (perHour float64, assumption string, err error) {
	if band == PublishedGPUPreset {
		h := math.Sqrt(PublishedGPUMinHours * PublishedGPUMaxHours)
		return 1 / h, fmt.Sprintf("published spot GPU measurements: single-node V100 spot instances preempted every %.1f to %.0f hours in SkyPilot's 2023 traces (Wu et al., \"Can't Be Late\", NSDI '24); exponential, MTBF %.2f h (the geometric mean)", PublishedGPUMinHours, PublishedGPUMaxHours, h), nil
	}
	for i, b := range spotBands() {
		if band == b.label || band == fmt.Sprint(i) {
			rate := -math.Log1p(-b.monthly) / HoursPerMonth
			return rate, fmt.Sprintf("AWS Spot Advisor band %s read as %.0f%% of nodes interrupted per 720 h month: exponential, MTBF %.0f h", b.label, b.monthly*100, 1/rate), nil
		}
	}
	return 0, "", fmt.Errorf("spot band %q is not one of %v (or 0-4), nor %q", band, SpotBandLabels(), PublishedGPUPreset)
}

// SpotAdvice is one Spot Advisor row: an instance type's interruption
// band and savings in a region.
type SpotAdvice struct {
	Band    string
	Savings int // percent below on-demand (negative: spot costs more)
	// SavingsKnown is false when the row gives no savings.
	SavingsKnown bool
}

// SpotAdvisor holds Spot Advisor rows by region and instance type.
type SpotAdvisor struct {
	rows map[[2]string]SpotAdvice
	// Source describes the data and its snapshot.
	Source string
}

// NewSpotAdvisor is an empty advisor.
func NewSpotAdvisor(source string) *SpotAdvisor {
	return &SpotAdvisor{rows: map[[2]string]SpotAdvice{}, Source: source}
}

// Add records a row.
func (a *SpotAdvisor) Add(region, instanceType string, adv SpotAdvice) {
	a.rows[[2]string{region, instanceType}] = adv
}

// Lookup finds the advice for an instance type in a region.
func (a *SpotAdvisor) Lookup(region, instanceType string) (SpotAdvice, bool) {
	adv, ok := a.rows[[2]string{region, instanceType}]
	return adv, ok
}

// Len is the number of rows.
func (a *SpotAdvisor) Len() int { return len(a.rows) }

// PublishedGPUPreset is the band name of the preset from published spot
// GPU measurements: single-node V100 spot instances on AWS were preempted
// every 1.5 to 4 hours in the 2023 traces of Wu et al., "Can't Be Late:
// Optimizing Spot Instance Savings under Deadlines" (NSDI '24). The
// figures are carried over, not the data. The Spot Advisor's bands, read
// as a monthly share of nodes interrupted, give thousands of node-hours
// between interruptions for the same families.
const PublishedGPUPreset = "published-gpu-2023"

// PublishedGPUMinHours and PublishedGPUMaxHours are that range.
const (
	PublishedGPUMinHours = 1.5
	PublishedGPUMaxHours = 4.0
)
