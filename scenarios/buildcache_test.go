package scenarios

import (
	"crypto/sha256"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/services"
)

// deepHash tells apart any two LLM plans' inputs that differ in one
// field, exported or not, behind a pointer or not, and writes the same
// bytes for equal contents behind different pointers; a function it
// cannot compare (a tensor-parallel engine's all-reduce) makes the plan
// uncacheable rather than equal to another's.
func TestDeepHashTellsPlansApart(t *testing.T) {
	key := func(v any) ([sha256.Size]byte, bool) {
		h := sha256.New()
		ok := deepHash(h, reflect.ValueOf(v))
		var k [sha256.Size]byte
		h.Sum(k[:0])
		return k, ok
	}
	e, err := LLMEngine("llama-3-8b", "H100-80GB", 1)
	require.NoError(t, err)
	base := func() *services.LLM {
		r := serving.LeastOutstanding
		return &services.LLM{Config: serving.LLMConfig{Engine: e, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192, BlockSize: 16},
			Input: serving.EmpiricalTokens([]int{5, 1, 9}), Output: serving.TokenDist{Kind: serving.Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024},
			Router: &r}
	}
	k0, ok := key(base())
	require.True(t, ok)
	k1, _ := key(base()) // other pointers, the same contents
	require.Equal(t, k0, k1)
	for name, change := range map[string]func(x *services.LLM){
		"a float":             func(x *services.LLM) { x.Config.Engine.GPU.GBps *= 1.0000001 },
		"a sequence limit":    func(x *services.LLM) { x.Config.MaxNumSeqs = 255 },
		"an empirical length": func(x *services.LLM) { x.Input.Values[2] = 10 },
		"one more length":     func(x *services.LLM) { x.Input.Values = append(x.Input.Values, 9) },
		"the router":          func(x *services.LLM) { r := serving.RoundRobin; x.Router = &r },
		"no router":           func(x *services.LLM) { x.Router = nil },
		"a model's name":      func(x *services.LLM) { x.Config.Engine.Model.Name = "other" },
	} {
		x := base()
		change(x)
		k, ok := key(x)
		require.True(t, ok, name)
		require.NotEqual(t, k0, k, name)
	}
	tp, err := LLMEngine("llama-3-8b", "H100-80GB", 2)
	require.NoError(t, err)
	x := base()
	x.Config.Engine = tp
	_, ok = key(x)
	require.False(t, ok, "an all-reduce function cannot be compared")
}
