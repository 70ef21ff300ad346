package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// A chat whose prompts start with one of 3 system prompts of 1,000
// tokens: vLLM caches the prefix's 62 full blocks of 16 (992 tokens), so
// each prompt prefills 992 fewer tokens, and each replica holds the three
// prefixes' 186 blocks. The replica's capacity is the fast model's with
// that cache (models/serving holds it to the exact model), above the
// same engine's without it.
func TestLLMServicePrefix(t *testing.T) {
	body := strings.NewReplacer("inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}", "inputTokens: {min: 1100, max: 1600}\n        prefix: {tokens: 1000, groups: 3}",
		"outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}", "outputTokens: {min: 64, max: 256}").Replace(svcCluster + svcLLMA100)
	require.Contains(t, body, "prefix:")
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	l := b.Config.Services[0].Spec.LLM
	require.Equal(t, 992, l.Config.PrefixHitTokens)
	require.EqualValues(t, 186, l.Config.PrefixCacheBlocks)
	without := l.Config
	without.PrefixHitTokens, without.PrefixCacheBlocks = 0, 0
	capWithout, err := serving.LLMCapacity(without, l.Input, l.Output)
	require.NoError(t, err)
	capWith, err := serving.LLMCapacity(l.Config, l.Input, l.Output)
	require.NoError(t, err)
	require.Equal(t, capWith, l.CapacityPerReplica)
	require.Greater(t, capWith, 1.3*capWithout)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "prefix caching (vLLM's automatic prefix caching): each prompt's first 992 tokens (the prefix's full blocks of 16) are found cached; every replica holds the 3 prefixes' 186 blocks")

	for _, c := range []struct{ from, to, want string }{
		{"prefix: {tokens: 1000, groups: 3}", "prefix: {tokens: 1100, groups: 3}", "llm.prefix.tokens: 1100: a prefix is part of every prompt, from 1 to 1099 tokens (below the shortest prompt, 1100)"},
		{"prefix: {tokens: 1000, groups: 3}", "prefix: {tokens: 10}", "llm.prefix.tokens: 10 tokens fill no KV block of 16: vLLM caches full blocks only"},
		{"prefix: {tokens: 1000, groups: 3}", "prefix: {tokens: 1000, groups: 0}", "llm.prefix.groups: 0: from 1 to 10000 prefixes"},
		{"prefix: {tokens: 1000, groups: 3}", "prefix: {tokens: 1000, groups: 9000}", "llm.prefix.groups: the cached prefixes' 558000 blocks leave"},
	} {
		_, err := buildSvc(t, strings.Replace(body, c.from, c.to, 1))
		requireInputError(t, err)
		require.ErrorContains(t, err, c.want)
	}
}
