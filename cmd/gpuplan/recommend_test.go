package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecommendRefusesBadQuestions(t *testing.T) {
	tt := "../../scenarios/examples/two-teams/scenario.yaml"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--vary", "cluster.pools[l4].count=3..10", "--subject-to", "wait.p95 <= 30m", "--subject-to", "wait.p95 >= 1h"},
			`--subject-to "wait.p95 >= 1h": contradicts wait.p95 <= 30m: no value is both`},
		{[]string{"--vary", "cluster.pools[l4].cuont=3..10"}, `--vary "cluster.pools[l4].cuont=3..10": cluster.pools[l4].cuont = 3: unknown field "cuont"`},
		{[]string{"--vary", "cluster.pools[h100].count=3..10"}, `--vary "cluster.pools[h100].count=3..10": no item named "h100"`},
		{[]string{"--vary", "cluster.pools[l4].count=10..3"}, "is empty: to (3) is below from (10)"},
		{[]string{"--subject-to", "wait.p95 <= 1h"}, "give at least one --vary"},
		{[]string{"--vary", "cluster.pools[l4].count=3..4", "--minimize", "cheapness"}, "--minimize"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 2, run(append([]string{"recommend", tt}, c.args...), nil, &stdout, &stderr), c.args)
		require.Contains(t, stderr.String(), c.msg)
	}
}
