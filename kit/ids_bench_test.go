package kit_test

import (
	"testing"

	"github.com/switchboard/switchboard/kit"
)

// BenchmarkNewID mints ids of one prefix, as the hot paths do (a message, its events, their
// deliveries …).
func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = kit.NewID("msg")
	}
}
