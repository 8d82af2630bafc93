package bridgeload

import (
	"fmt"
	"slices"
	"time"
)

// Summary describes a set of durations.
type Summary struct {
	N                       int
	Min, P50, P90, P99, Max time.Duration
	Mean                    time.Duration
}

// Summarize sorts a copy of d and summarises it (zero Summary for none).
// Percentiles use the nearest-rank method: P99 of 100 samples is the 99th
// smallest, so a single outlier in 100 does not set it.
func Summarize(d []time.Duration) Summary {
	if len(d) == 0 {
		return Summary{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	return Summary{
		N: len(s), Min: s[0], Max: s[len(s)-1],
		P50: Percentile(s, 50), P90: Percentile(s, 90), P99: Percentile(s, 99),
		Mean: sum / time.Duration(len(s)),
	}
}

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// rank = ceil(p/100 * n), 1-based.
	rank := int(p / 100 * float64(len(sorted)))
	if float64(rank) < p/100*float64(len(sorted)) {
		rank++
	}
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// String prints the summary in milliseconds.
func (s Summary) String() string {
	return fmt.Sprintf("n=%d p50=%s p90=%s p99=%s max=%s mean=%s",
		s.N, Ms(s.P50), Ms(s.P90), Ms(s.P99), Ms(s.Max), Ms(s.Mean))
}

// Ms formats d in milliseconds with three decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }
