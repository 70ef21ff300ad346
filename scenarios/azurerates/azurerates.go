package azurerates

import (
	"fmt"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/validate/strict"
)

// MaxRows bounds the rows of one file (Azure has a few thousand VM sizes
// and regions together).
const MaxRows = 1 << 20

// file is the result of a Resource Graph query: the Azure CLI's
// (count, data, skip_token, total_records) or the REST API's (totalRecords,
// count, data, facets, resultTruncated, $skipToken).
type file struct {
	Count           *int    `json:"count,omitempty"`
	TotalRecordsCLI *int    `json:"total_records,omitempty"`
	TotalRecords    *int    `json:"totalRecords,omitempty"`
	SkipTokenCLI    *string `json:"skip_token,omitempty"`
	SkipToken       *string `json:"$skipToken,omitempty"`
	Facets          []any   `json:"facets,omitempty"`
	ResultTruncated any     `json:"resultTruncated,omitempty"`
	Data            []row   `json:"data"`
}

// row is one projected row: the documented query's names (skuName,
// location, spotEvictionRate), or evictionRate as the property is called.
type row struct {
	SkuName          string `json:"skuName"`
	Location         string `json:"location"`
	SpotEvictionRate string `json:"spotEvictionRate,omitempty"`
	EvictionRate     string `json:"evictionRate,omitempty"`
}

// Rates is each VM size's eviction-rate band by region.
type Rates struct {
	// File is where the rates were read.
	File  string
	bands map[[2]string]string
}

// Parse reads a Resource Graph result from data (JSON, or YAML of the same
// shape); name names it in errors.
func Parse(name string, data []byte) (*Rates, error) {
	var f file
	pos, err := strict.Decode(name, data, &f, strict.Options{What: "an Azure Resource Graph result"})
	if err != nil {
		return nil, err
	}
	bad := func(path, format string, args ...any) error {
		return pos.Errorf(name, path, format, args...)
	}
	if len(f.Data) == 0 {
		return nil, bad("data", "has no rows: the query found no eviction rates (project skuName, location and spotEvictionRate from SpotResources where type =~ 'microsoft.compute/skuspotevictionrate/location')")
	}
	if len(f.Data) > MaxRows {
		return nil, bad("data", "has %d rows, more than %d", len(f.Data), MaxRows)
	}
	if f.ResultTruncated != nil && fmt.Sprint(f.ResultTruncated) == "true" {
		return nil, bad("resultTruncated", "is true: Resource Graph cut the result short; page through it ($skipToken) and give every row")
	}
	r := &Rates{File: name, bands: map[[2]string]string{}}
	for i, x := range f.Data {
		at := fmt.Sprintf("data[%d]", i)
		rate := x.SpotEvictionRate
		field := at + ".spotEvictionRate"
		switch {
		case rate != "" && x.EvictionRate != "":
			return nil, bad(at+".evictionRate", "a row gives spotEvictionRate or evictionRate, not both")
		case rate == "":
			rate, field = x.EvictionRate, at+".evictionRate"
		}
		switch {
		case strings.TrimSpace(x.SkuName) == "":
			return nil, bad(at+".skuName", "is missing: each row names its VM size (project skuName = tostring(sku.name))")
		case strings.TrimSpace(x.Location) == "":
			return nil, bad(at+".location", "is missing: each row names its region")
		case rate == "":
			return nil, bad(at+".spotEvictionRate", "is missing: each row gives its eviction rate (project spotEvictionRate = tostring(properties.evictionRate))")
		}
		band, ok := models.AzureEvictionBand(rate)
		if !ok {
			return nil, bad(field, "is %s, not one of Azure's eviction-rate bands %v", strict.Quote(rate), models.AzureEvictionBandLabels())
		}
		k := key(x.SkuName, x.Location)
		if prev, ok := r.bands[k]; ok && prev != band {
			return nil, bad(field, "%s in %s is given twice, as %s and %s", strict.Quote(x.SkuName), strict.Quote(x.Location), prev, band)
		}
		r.bands[k] = band
	}
	return r, nil
}

// Read reads a Resource Graph result file, bounded by strict.MaxFileBytes.
func Read(path string) (*Rates, error) {
	data, err := strict.ReadFileBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Lookup is the band of a VM size in a region (Resource Graph writes
// both in lower case; any case matches).
func (r *Rates) Lookup(vmSize, region string) (string, bool) {
	b, ok := r.bands[key(vmSize, region)]
	return b, ok
}

// Len is the number of VM size and region pairs.
func (r *Rates) Len() int { return len(r.bands) }

func key(sku, loc string) [2]string {
	return [2]string{strings.ToLower(strings.TrimSpace(sku)), strings.ToLower(strings.TrimSpace(loc))}
}
