package kit_test

import (
	"context"
	"testing"

	"github.com/switchboard/switchboard/kit"
)

// BenchmarkBatcher has 64 goroutines call Do of a batcher whose flush does nothing: the
// batcher's own cost a call.
func BenchmarkBatcher(b *testing.B) {
	bt := kit.NewBatcher(64, 1, func(_ context.Context, items []int) ([]int, error) { return items, nil })
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := bt.Do(ctx, 1); err != nil {
				b.Error(err)
			}
		}
	})
}
