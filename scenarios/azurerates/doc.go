// Package azurerates reads Azure Spot eviction rates as Azure Resource
// Graph gives them: the JSON that `az graph query -o json` writes (or the
// Resource Graph REST API's objectArray result) for Microsoft's documented
// query over the SpotResources table,
//
//	SpotResources
//	| where type =~ 'microsoft.compute/skuspotevictionrate/location'
//	| project skuName = tostring(sku.name), location,
//	    spotEvictionRate = tostring(properties.evictionRate)
//
// one row per VM size and region with its eviction-rate band ("0-5" ...
// "20+"). Azure publishes these rates only there and in the portal, to a
// signed-in account; no public copy exists, so gpuplan embeds none and
// reads the file a user exports.
package azurerates
