package strict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a Duration: Go's form ("90s", "1h30m"), optionally
// after a whole or decimal number of days ("3d", "1d12h", "0.5d"), with
// one sign in front of it all. An error quotes the whole value written.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, ok := parseDuration(s)
	if !ok {
		return 0, fmt.Errorf("%s is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)", Quote(s))
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, bool) {
	neg := false
	rest := s
	if r, ok := strings.CutPrefix(rest, "-"); ok {
		neg, rest = true, r
	} else {
		rest = strings.TrimPrefix(rest, "+")
	}
	if rest == "" {
		return 0, false
	}
	var total time.Duration
	// A day prefix: digits (and one point) then 'd', then nothing or a Go
	// duration that starts with a digit ("7days" is not "7d" and "ays").
	i := 0
	for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
		i++
	}
	if i > 0 && i < len(rest) && rest[i] == 'd' {
		days, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || days*float64(24*time.Hour) >= 9e18 {
			return 0, false
		}
		after := rest[i+1:]
		if after != "" && !(after[0] >= '0' && after[0] <= '9' || after[0] == '.') {
			return 0, false
		}
		total = time.Duration(math.Round(days * float64(24*time.Hour)))
		rest = after
	}
	if rest != "" {
		if rest[0] == '-' || rest[0] == '+' {
			return 0, false
		}
		d, err := time.ParseDuration(rest)
		if err != nil || d > math.MaxInt64-total {
			return 0, false
		}
		total += d
	}
	if neg {
		total = -total
	}
	return total, true
}
