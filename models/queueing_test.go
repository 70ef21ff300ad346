package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErlangCWorkedValues(t *testing.T) {
	// c=1: M/M/1, the probability of waiting is rho.
	p, err := ErlangC(1, 0.7)
	require.NoError(t, err)
	require.InDelta(t, 0.7, p, 1e-12)

	// c=2, a=1: P0 = 1/(1 + 1 + 1/(2!)*2/(2-1)) = 1/3; C = (1^2/2!)(2/(2-1)) P0 = 1/3.
	p, err = ErlangC(2, 1)
	require.NoError(t, err)
	require.InDelta(t, 1.0/3, p, 1e-12)

	// c=3, a=2: sum_{k<3} a^k/k! = 1+2+2 = 5; tail a^3/3! * 3/(3-2) = 4; C = 4/9.
	p, err = ErlangC(3, 2)
	require.NoError(t, err)
	require.InDelta(t, 4.0/9, p, 1e-12)
}

func TestMMcMeanWait(t *testing.T) {
	// M/M/1 with lambda=0.5, mu=1: Wq = rho/(mu-lambda) = 0.5/0.5 = 1.
	w, err := MMcMeanWait(0.5, 1, 1)
	require.NoError(t, err)
	require.InDelta(t, 1.0, w, 1e-12)
	// c=2, lambda=1, mu=1: Wq = (1/3)/(2-1) = 1/3.
	w, err = MMcMeanWait(1, 1, 2)
	require.NoError(t, err)
	require.InDelta(t, 1.0/3, w, 1e-12)
}

func TestErlangCRejectsSaturation(t *testing.T) {
	_, err := ErlangC(4, 4)
	require.ErrorContains(t, err, "saturates")
	_, err = ErlangC(0, 1)
	require.Error(t, err)
	_, err = ErlangC(2, -1)
	require.Error(t, err)
}
