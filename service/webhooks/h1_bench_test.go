//go:build unix

package webhooks

import (
	"context"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard/switchboard/store"
)

// BenchmarkAttempt makes attempts of one delivery to a loopback endpoint that answers 204 (a
// net/http server, as the e2e bench's sink), through net/http's client (nethttp) and through the
// deliverer's own (h1); allocations count both sides, the endpoint's the same in each.
func BenchmarkAttempt(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	secret, _ := NewSecret()
	data := `{"id":"msg_01jz0000000000000000000001","account_id":"acct_01jxyz","body":"hello there, this is a benchmark message","status":"delivered","delivered_at":"2026-11-25T04:04:40Z","attachments":[]}`
	work := &store.DeliveryWork{
		Delivery: store.WebhookDelivery{ID: "whd_01", Attempts: 0},
		Endpoint: store.WebhookEndpoint{ID: "we_1", URL: "http://" + ln.Addr().String() + "/hooks", Secret: secret, Enabled: true},
		Event: store.Event{ID: "evt_01jz0000000000000000000001", AccountID: "acct_01jxyz", Type: "message.delivered",
			Data: data, CreatedAt: time.Now()},
	}
	for _, own := range []bool{false, true} {
		name := "nethttp"
		if own {
			name = "h1"
		}
		b.Run(name, func(b *testing.B) {
			w := &Service{cfg: Config{Timeout: 5 * time.Second, Now: time.Now}, client: NewClient(true, 5*time.Second)}
			w.client.Timeout = 0
			// The deliverer's context, which its own client watches (StartDeliveries).
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if own {
				w.h1 = newH1Client(newDialer(true).DialContext)
				defer w.h1.closeIdle()
				w.h1.watch(ctx)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if status, failure, _ := w.attempt(ctx, work); status != 204 {
					b.Fatal(status, failure)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the process's user and system CPU time so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
