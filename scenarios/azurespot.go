package scenarios

import (
	"fmt"
	"math"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/azurerates"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// Azure's Spot eviction policies (scaleSetEvictionPolicy of an AKS agent
// pool, evictionPolicy of a Spot VM or scale set).
const (
	EvictionDelete     = "Delete"
	EvictionDeallocate = "Deallocate"
)

// DefaultOSDiskPricePerMonth is the OS disk a deallocated node keeps
// billing, a month: Azure Premium SSD P10 (128 GiB, the OS disk size AKS
// gives a node by default; Premium because the GPU VM sizes take premium
// storage), LRS, pay-as-you-go list price in East US, $19.71 a month
// (azure.microsoft.com/pricing/details/managed-disks, as listed 2024-2025;
// not read from the network here: set osDiskPricePerMonth for another
// tier, size or region). Azure bills a month as 730 hours.
const (
	DefaultOSDiskPricePerMonth = 19.71
	hoursPerMonth              = 730
	maxOSDiskPricePerMonth     = 10_000
)

// azureDeleteText and azureDeallocateText say what becomes of an evicted
// Azure Spot node under each policy (the notice's assumption).
const (
	azureDeleteText     = "eviction policy Delete, the AKS spot node pool default: the evicted node is deleted, nothing of it billed after"
	azureDeallocateText = "eviction policy Deallocate: the evicted node is stopped-deallocated, keeps its place in the scale set (no new VM replaces it) and bills its OS disk (%s) until the pool starts that same node again when capacity is back, Ready after %s (start and kubelet registration; its OS disk kept the images)"
)

// evictionPolicy applies a pool's evictionPolicy and osDiskPricePerMonth:
// Deallocate is for a fixed Azure spot pool (AKS documents that
// stopped-deallocated nodes count against quota and can cause issues with
// cluster scaling: an autoscaled pool with it is refused rather than
// guessed at).
func (s builder) evictionPolicy(at string, p *PoolSpec, res resources, cp *capacity.Pool, price *PoolPrice) error {
	switch p.EvictionPolicy {
	case "", EvictionDelete:
		if p.OSDiskPricePerMonth != nil {
			return s.errAt(at+".osDiskPricePerMonth", "is what a deallocated node's OS disk bills: set evictionPolicy: Deallocate")
		}
		return nil
	case EvictionDeallocate:
	default:
		return s.errAt(at+".evictionPolicy", "is %s; Azure's eviction policies are Delete and Deallocate", Quote(p.EvictionPolicy))
	}
	switch {
	case capacityType(p.CapacityType) != models.Spot:
		return s.errAt(at+".evictionPolicy", "is an Azure spot pool's: set capacityType: spot")
	case !azureVMSize(p.InstanceType, res):
		return s.errAt(at+".evictionPolicy", "Deallocate is Azure's (a Spot VM scale set's); %s is not an Azure VM size", Quote(p.InstanceType))
	case p.Autoscaling != nil:
		return s.errAt(at+".evictionPolicy", "Deallocate is modelled on a fixed pool: AKS documents that stopped-deallocated nodes count against quota and can cause issues with cluster scaling; drop autoscaling or use Delete")
	}
	perMonth := DefaultOSDiskPricePerMonth
	basis := fmt.Sprintf("$%.2f a month, Azure Premium SSD P10 128 GiB LRS list price in East US, the default", perMonth)
	if v := p.OSDiskPricePerMonth; v != nil {
		if math.IsNaN(*v) || *v < 0 || *v > maxOSDiskPricePerMonth {
			return s.errAt(at+".osDiskPricePerMonth", "is %g; a disk's price is from 0 to %d USD a month", *v, maxOSDiskPricePerMonth)
		}
		perMonth = *v
		basis = fmt.Sprintf("$%g a month, the scenario's", perMonth)
	}
	cp.Deallocate = true
	cp.Restart = DefaultProvisioning
	if p.Provisioning != nil {
		cp.Restart = p.Provisioning.Millis()
	}
	price.DiskPerHour = perMonth / hoursPerMonth
	text := fmt.Sprintf(azureDeallocateText, basis+fmt.Sprintf(", $%.4f an hour at 730 h a month", price.DiskPerHour), durationText(cp.Restart))
	if a := cp.Interruptions.Assumption; strings.Contains(a, azureDeleteText) {
		cp.Interruptions.Assumption = strings.Replace(a, azureDeleteText, text, 1)
	} else {
		cp.Interruptions.Assumption = a + "; " + text
	}
	price.Interruptions = cp.Interruptions.Assumption
	return nil
}

// azureVMSize reports whether an instance type is an Azure VM size: the
// catalog's cloud, else its name (Standard_...).
func azureVMSize(it string, res resources) bool {
	if res.ok {
		return res.it.Cloud == models.Azure
	}
	return strings.HasPrefix(it, "Standard_")
}

// azureBand sets an Azure spot pool's eviction rate from an Azure
// eviction-rate band: the one given, or (band auto, or none beside
// evictionRates) the pool's VM size and region's in the Resource Graph
// result given. Azure publishes the rates only there, to a signed-in
// account: with no file, auto says how to export one.
func (s interrupter) azureBand(at, vmSize, region string, spec *InterruptionSpec, p *capacity.Process) error {
	label, field := spec.Band, at+".band"
	if label == "" || label == "auto" {
		if spec.EvictionRates == "" {
			return s.errAt(field, "auto: Azure publishes Spot eviction rates per VM size and region only through Azure Resource Graph and the portal, to a signed-in account, so gpuplan has none; export them (az graph query -q \"SpotResources | where type =~ 'microsoft.compute/skuspotevictionrate/location' | project skuName = tostring(sku.name), location, spotEvictionRate = tostring(properties.evictionRate)\" -o json > rates.json) and give evictionRates: rates.json, or give the band (%s), or leave interruptions out for the measured preset", strings.Join(models.AzureEvictionBandLabels(), ", "))
		}
		rates, err := azurerates.Read(s.path(spec.EvictionRates))
		if err != nil {
			return err
		}
		b, ok := rates.Lookup(vmSize, region)
		if !ok {
			return s.errAt(at+".evictionRates", "%s has no eviction rate for %s in %s (%d VM sizes and regions in it)", Quote(spec.EvictionRates), vmSize, region, rates.Len())
		}
		label, field = b, at+".evictionRates"
	}
	rate, why, err := models.AzureEvictionRate(label)
	if err != nil {
		return s.errAt(field, "%v", err)
	}
	p.RatePerHour = rate
	p.Assumption = fmt.Sprintf("%s in %s: %s", vmSize, region, why)
	if spec.EvictionRates != "" {
		p.Assumption += fmt.Sprintf(" (Azure Resource Graph result %s)", spec.EvictionRates)
	}
	return nil
}
