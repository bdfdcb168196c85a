package service_test

import (
	"testing"
	"time"

	"github.com/switchboard/switchboard/service"
)

// BenchmarkQuietHoursRelease is what a send pays for quiet hours when they are on: the
// recipient's zones (cached after the first lookup) and the window's next opening.
func BenchmarkQuietHoursRelease(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2027, 6, 15, 23, 30, 0, 0, ny)
	for _, bc := range []struct{ name, number string }{
		{"one zone", "+16465550100"}, {"two zones", "+12085550100"}, {"toll-free, 42 zones", "+18005550100"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				service.DefaultQuietHours.ReleaseFor(bc.number, ny, at)
			}
		})
	}
}

// BenchmarkFormatClock writes a window's two ends, as GET /accounts/{id} does.
func BenchmarkFormatClock(b *testing.B) {
	for b.Loop() {
		_ = service.FormatClock(480) + service.FormatClock(1260)
	}
}
