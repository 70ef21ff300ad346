package azurerates

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The Azure CLI's result (testdata/PROVENANCE.md): four rows, looked up
// in any case, each band as Azure writes it normalised to its label.
func TestCLIResult(t *testing.T) {
	r, err := Read("testdata/eviction_rates_cli.json")
	require.NoError(t, err)
	require.Equal(t, 4, r.Len())
	for _, c := range []struct{ sku, loc, band string }{
		{"Standard_NC24ads_A100_v4", "eastus", "5-10%"},
		{"standard_nc24ads_a100_v4", "WestEurope", "20+%"},
		{"Standard_NC4as_T4_v3", "eastus", "0-5%"},
		{"Standard_NC40ads_H100_v5", "eastus", "15-20%"},
	} {
		b, ok := r.Lookup(c.sku, c.loc)
		require.True(t, ok, c.sku)
		require.Equal(t, c.band, b, c.sku)
	}
	_, ok := r.Lookup("Standard_NC4as_T4_v3", "westeurope")
	require.False(t, ok)
}

// The REST API's objectArray result, with the property's own column name.
func TestRESTResult(t *testing.T) {
	r, err := Read("testdata/eviction_rates_rest.json")
	require.NoError(t, err)
	b, ok := r.Lookup("Standard_NC24ads_A100_v4", "eastus")
	require.True(t, ok)
	require.Equal(t, "10-15%", b)
}

// Bad results name the file, line and field.
func TestBadResults(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"data": []}`, `x.json:1:10: data: has no rows`},
		{"{\"data\": [\n {\"skuName\": \"a\", \"location\": \"eastus\", \"spotEvictionRate\": \"5-11\"}]}", `x.json:2:`},
		{"{\"data\": [\n {\"skuName\": \"a\", \"location\": \"eastus\", \"spotEvictionRate\": \"5-11\"}]}", `not one of Azure's eviction-rate bands`},
		{"{\"data\": [\n {\"skuName\": \"a\", \"location\": \"eastus\"}]}", `data[0].spotEvictionRate: is missing`},
		{"{\"data\": [\n {\"sku\": \"a\", \"location\": \"eastus\", \"spotEvictionRate\": \"0-5\"}]}", `sku`},
		{"{\"data\": [\n {\"skuName\": \"a\", \"location\": \"eastus\", \"spotEvictionRate\": \"0-5\"},\n {\"skuName\": \"A\", \"location\": \"eastus\", \"spotEvictionRate\": \"20+\"}]}", `given twice, as 0-5% and 20+%`},
		{"{\"data\": [{\"skuName\": \"a\", \"location\": \"b\", \"evictionRate\": \"0-5\"}], \"resultTruncated\": \"true\"}", `resultTruncated: is true`},
	} {
		_, err := Parse("x.json", []byte(c.body))
		require.Error(t, err, c.body)
		require.Contains(t, err.Error(), c.want, c.body)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/eviction_rates_cli.json", "testdata/eviction_rates_rest.json"} {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"data": [{"skuName": "a", "location": "b", "spotEvictionRate": "20+", "evictionRate": "0-5"}]}`))
	f.Add([]byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("fuzz.json", data)
		if err == nil && r.Len() == 0 {
			t.Fatal("a result without rows was accepted")
		}
	})
}
