package sim

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// uvarint reads what binary.Uvarint reads, and calls bad (position past
// the end) what it refuses: a varint cut short by the end, or one over 64
// bits; checked on varints of every length, truncated, and on random
// bytes.
func TestUvarintAsBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 2))
	check := func(b []byte, p int) {
		t.Helper()
		got, gp := uvarint(b, p)
		var want uint64
		wp := len(b) + 1
		if p < len(b) {
			if x, n := binary.Uvarint(b[p:]); n > 0 {
				want, wp = x, p+n
			}
		}
		if got != want && wp <= len(b) || gp != wp {
			t.Fatalf("uvarint(%x, %d) = %d, %d; want %d, %d", b, p, got, gp, want, wp)
		}
	}
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		b := binary.AppendUvarint([]byte{0xff}, x)
		for end := 0; end <= len(b); end++ {
			check(b[:end], 1)
		}
	}
	check(nil, 0)
	// Over 64 bits: ten bytes whose last is over 1, eleven bytes.
	check([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, 0)
	check([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0)
	for range 100_000 {
		b := make([]byte, r.IntN(14))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(3) > 0 {
				b[i] |= 0x80
			}
		}
		check(b, r.IntN(len(b)+1))
	}
}

// BenchmarkUvarint reads varints of the sizes a spilled record's fields
// take (mostly 1 to 4 bytes).
func BenchmarkUvarint(b *testing.B) {
	r := rand.New(rand.NewPCG(34, 3))
	var buf []byte
	n := 0
	for range 1 << 16 {
		buf = binary.AppendUvarint(buf, uint64(r.Int64N(1<<(1+r.IntN(28)))))
		n++
	}
	b.ResetTimer()
	var sum uint64
	for range b.N {
		p := 0
		for range n {
			var x uint64
			x, p = uvarint(buf, p)
			sum += x
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/varint")
	_ = sum
}
