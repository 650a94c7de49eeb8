package rttstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/rttstore"
)

// nopStore answers ReadRow at once, so that a call through rttstore
// takes the delay alone.
type nopStore struct{ store.Store }

func (nopStore) ReadRow(context.Context, string, []byte) (store.Row, bool, error) {
	return store.Row{}, false, nil
}

// BenchmarkRealizedDelay records how long a round trip of rtt really takes:
// the mean per call, and how much later than rtt that is on average and at
// the 99th percentile (the overshoot of Go timers).
func BenchmarkRealizedDelay(b *testing.B) {
	for _, rtt := range []time.Duration{500 * time.Microsecond, time.Millisecond} {
		b.Run("rtt="+rtt.String(), func(b *testing.B) {
			s := rttstore.New(nopStore{}, rtt)
			ctx := context.Background()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, _, err := s.ReadRow(ctx, "t", nil); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			var sum time.Duration
			for _, d := range took {
				sum += d
			}
			mean := sum / time.Duration(len(took))
			slices.Sort(took)
			p99 := took[len(took)*99/100]
			b.ReportMetric(float64(mean.Nanoseconds()), "realized-ns/call")
			b.ReportMetric(float64((mean - rtt).Nanoseconds()), "overshoot-ns/call")
			b.ReportMetric(float64((p99 - rtt).Nanoseconds()), "p99-overshoot-ns")
		})
	}
}
