package models

import (
	"fmt"
	"math"
	"strings"
)

// Azure Spot eviction-rate bands, as the Azure portal and Azure Resource
// Graph (SpotResources, type microsoft.compute/skuspotevictionrate/location)
// give them per VM size and region. Microsoft's documentation (Use Azure
// Spot Virtual Machines, "Pricing and eviction history") says they are
// quoted per hour: a rate of 10% is a 10% chance that a VM is evicted
// within the next hour, from the eviction history of the trailing 28 days.
// Each band is read at its upper edge (20+% as 25%), as the AWS bands are.
type azureBand struct {
	label  string
	hourly float64
}

func azureBands() [5]azureBand {
	return [5]azureBand{{"0-5%", 0.05}, {"5-10%", 0.10}, {"10-15%", 0.15}, {"15-20%", 0.20}, {"20+%", 0.25}}
}

// AzureEvictionBandLabels lists Azure's eviction-rate bands, lowest first.
func AzureEvictionBandLabels() []string {
	bands := azureBands()
	out := make([]string, len(bands))
	for i, b := range bands {
		out[i] = b.label
	}
	return out
}

// AzureEvictionBand normalises an Azure eviction-rate band as Resource
// Graph writes it ("5-10", "20+") or the portal shows it ("5-10%"): its
// label, or false when it is none.
func AzureEvictionBand(s string) (string, bool) {
	k := strings.TrimSuffix(strings.ReplaceAll(strings.TrimSpace(s), " ", ""), "%")
	for i, b := range azureBands() {
		if k == strings.TrimSuffix(b.label, "%") || k == fmt.Sprint(i) {
			return b.label, true
		}
	}
	return "", false
}

// AzureEvictionRate converts an Azure eviction-rate band into an
// exponential eviction rate per node-hour: an hourly probability p (the
// band's upper edge) gives lambda = -ln(1-p) per hour. It also returns the
// assumption in words, for the report.
func AzureEvictionRate(band string) (perHour float64, assumption string, err error) {
	label, ok := AzureEvictionBand(band)
	if !ok {
		return 0, "", fmt.Errorf("%q is not an Azure eviction-rate band: one of %v (or 0-4; Resource Graph writes them without the %%)", band, AzureEvictionBandLabels())
	}
	for _, b := range azureBands() {
		if b.label == label {
			rate := -math.Log1p(-b.hourly)
			return rate, fmt.Sprintf("Azure Spot eviction-rate band %s (Microsoft: the chance a VM is evicted within the next hour, from the trailing 28 days) read at %.0f%% an hour: exponential, MTBF %.2f h", b.label, b.hourly*100, 1/rate), nil
		}
	}
	panic("unreachable: a normalised band is in the table")
}
