package scenarios

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVariantsPatchByName(t *testing.T) {
	s, err := LoadFile("examples/spot-what-if.yaml")
	require.NoError(t, err)
	require.Equal(t, []string{"all-spot-tight", "all-spot-advisor", "mix-tight"}, s.VariantNames())
	v, err := s.Variant("mix-tight")
	require.NoError(t, err)
	require.Equal(t, "spot-what-if/mix-tight", v.Metadata.Name)
	pools := v.Spec.Cluster.Pools
	require.Equal(t, [2]int{2, 2}, [2]int{pools[0].Count, pools[1].Count})
	require.Equal(t, "12h0m0s", pools[1].Interruptions.MTBF.Duration.String(), "fields the patch leaves alone stay")
	require.Nil(t, v.Spec.Variants)
	v, err = s.Variant("all-spot-advisor")
	require.NoError(t, err)
	in := v.Spec.Cluster.Pools[1].Interruptions
	require.Nil(t, in.MTBF, "null removes a field")
	require.Equal(t, "auto", in.Band)
	require.NotNil(t, in.Notice)
	// The scenario itself is untouched.
	require.Equal(t, 4, s.Spec.Cluster.Pools[0].Count)
	_, err = s.Variant("nope")
	require.ErrorContains(t, err, `no variant "nope"`)
}

func TestMergePatch(t *testing.T) {
	var doc, patch any
	require.NoError(t, json.Unmarshal([]byte(`{"a": 1, "b": {"c": 2, "d": 3}, "pools": [{"name": "x", "count": 1}, {"name": "y", "count": 2}], "tags": [1, 2]}`), &doc))
	require.NoError(t, json.Unmarshal([]byte(`{"a": null, "b": {"c": 5}, "pools": [{"name": "y", "$patch": "delete"}, {"name": "z", "count": 3}, {"name": "x", "count": 9}], "tags": [7]}`), &patch))
	out, err := json.Marshal(mergePatch(doc, patch))
	require.NoError(t, err)
	require.JSONEq(t, `{"b": {"c": 5, "d": 3}, "pools": [{"name": "x", "count": 9}, {"name": "z", "count": 3}], "tags": [7]}`, string(out))
}

func TestVariantErrors(t *testing.T) {
	data, err := readExample("examples/spot-what-if.yaml")
	require.NoError(t, err)
	for _, c := range []struct{ from, to, want string }{
		{"        - {name: train-od, count: 2}", "        - {name: train-od, cont: 2}", `spec.variants[2].patch.cluster.pools[0].cont: unknown field "cont" (did you mean "count"?)`},
		{"        - {name: train-od, count: 2}", "        - {name: train-od, count: -2}", `variant mix-tight: must not be negative`},
		{"  - name: mix-tight", "  - name: all-spot-tight", `variant "all-spot-tight" is defined twice`},
	} {
		body := strings.Replace(data, c.from, c.to, 1)
		require.NotEqual(t, data, body)
		_, err := Parse("w.yaml", "examples", []byte(body))
		require.Error(t, err, c.want)
		require.Contains(t, err.Error(), c.want)
		requireInputError(t, err)
	}
}

func readExample(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}
