package strict

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rule is the evaluator of the Karpenter rule with this exact text.
func rule(t *testing.T, text string) celRule {
	t.Helper()
	f, ok := karpenterCELRules[text]
	require.True(t, ok, text)
	return f
}

// jsonOf decodes JSON as the CRD check does (numbers as json.Number).
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	require.NoError(t, d.Decode(&v))
	return v
}

// The evaluators against CEL's meaning, case by case: find("^([^/]+)")
// is the key's part before its first '/' (the whole key without one), so
// a subdomain of karpenter.sh is restricted and karpenter.shop is not;
// int() of a string that is not an integer is an error, which fails the
// rule; a network card's interfaces must differ in device index.
func TestKarpenterRulesAsCELReadsThem(t *testing.T) {
	domain := rule(t, `self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !self.find("^([^/]+)").endsWith("karpenter.sh")`)
	for key, ok := range map[string]bool{
		"karpenter.sh/capacity-type": true, "team": true, "karpenter.shop/x": true,
		"karpenter.sh/custom": false, "x.karpenter.sh/y": false, "karpenter.sh": false,
	} {
		require.Equal(t, ok, domain(key), key)
	}
	gt := rule(t, `self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)`)
	for vals, ok := range map[string]bool{`["2"]`: true, `["0"]`: true, `["-1"]`: false, `["two"]`: false, `["1", "2"]`: false, `[]`: false} {
		require.Equal(t, ok, gt(jsonOf(t, `[{"key": "k", "operator": "Gt", "values": `+vals+`}]`)), vals)
	}
	nics := rule(t, `self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex == y.deviceIndex).size() == 1 && (x.interfaceType != 'efa-only' || self.filter(y, x.networkCardIndex == y.networkCardIndex && y.interfaceType == 'efa-only').size() == 1))`)
	require.True(t, nics(jsonOf(t, `[{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}, {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]`)))
	require.False(t, nics(jsonOf(t, `[{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}, {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]`)))
	require.False(t, nics(jsonOf(t, `[{"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}, {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "efa-only"}]`)))
	// The capacity reservation rule reads all(), not exists(): it fails
	// only when every term mixes id with another field.
	cr := rule(t, `!self.all(x, has(x.id) && (has(x.tags) || has(x.ownerID) || has(x.instanceMatchCriteria)))`)
	require.True(t, cr(jsonOf(t, `[{"id": "cr-1", "ownerID": "1"}, {"tags": {"a": "b"}}]`)))
	require.False(t, cr(jsonOf(t, `[{"id": "cr-1", "ownerID": "1"}]`)))
	win := rule(t, `self.split('@')[0] in ['windows2019','windows2022','windows2025'] ? self.split('@')[1] == 'latest' : true`)
	for alias, ok := range map[string]bool{"windows2022@latest": true, "windows2022@v1": false, "windows2022": false, "al2023@v20250101": true} {
		require.Equal(t, ok, win(alias), alias)
	}
}
