package store_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/store"
)

// BenchmarkWebhookQueue claims pending webhook deliveries and records their attempts as the
// deliverer does at load, and reports the time per delivery and, on PostgreSQL, its backends' CPU
// per delivery (claims, outcomes and their commits; the events and their deliveries are written
// before the timer starts). Each sub-benchmark claims "claim" deliveries at a time and records
// the successes "record" to a statement. It runs on SQLite, or on PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set.
func BenchmarkWebhookQueue(b *testing.B) {
	ctx := context.Background()
	st, cleanup, err := store.OpenTest(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	prj, err := st.CreateProject(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now().UTC()
	ep := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: prj.ID, URL: "https://hooks.example/in",
		Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Enabled: true, CreatedAt: at, UpdatedAt: at}
	if err := st.CreateWebhookEndpoint(ctx, ep); err != nil {
		b.Fatal(err)
	}
	account := store.NewID(store.PrefixAccount)
	// publish writes n events of one delivery each, as a receipt's statement does.
	publish := func(n int) {
		for n > 0 {
			evs := make([]store.Event, min(n, 200))
			for i := range evs {
				id := store.NewID(store.PrefixMessage)
				evs[i], err = store.NewEvent(prj.ID, account, "message.delivered", map[string]any{"id": id,
					"body": "hello there, this is a benchmark message", "status": "delivered",
					"conversation": map[string]any{"id": store.NewID(store.PrefixConversation), "contact": map[string]any{
						"id": store.NewID(store.PrefixContact), "phone_number": "+15555550123"}}})
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := st.Tx(ctx, func(tx *store.Store) error { return tx.InsertEvents(ctx, evs) }); err != nil {
				b.Fatal(err)
			}
			n -= len(evs)
		}
	}
	for _, bc := range []struct{ claim, record int }{{40, 18}, {40, 48}, {100, 100}} {
		b.Run("claim="+strconv.Itoa(bc.claim)+"/record="+strconv.Itoa(bc.record), func(b *testing.B) {
			const rounds = 50
			publish(rounds * bc.claim)
			done := 0
			var took, pgCPU time.Duration
			pids := backendPIDs(b, st)
			for b.Loop() {
				b.StopTimer()
				publish(bc.claim)
				b.StartTimer()
				began, pg := time.Now(), onCPU(b, pids)
				works, err := st.ClaimDeliveries(ctx, time.Now(), bc.claim, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				outs := make([]store.DeliveryOutcome, len(works))
				for i, w := range works {
					outs[i] = store.DeliveryOutcome{ID: w.Delivery.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded,
						QueueRow: w.QueueRow}
				}
				for len(outs) > 0 {
					n := min(len(outs), bc.record)
					if err := st.RecordDeliveries(ctx, outs[:n], time.Now()); err != nil {
						b.Fatal(err)
					}
					outs = outs[n:]
				}
				took += time.Since(began)
				pgCPU += onCPU(b, pids) - pg
				done += len(works)
			}
			if done == 0 {
				b.Fatal("no delivery claimed")
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(done)/1000, "µs/delivery")
			if st.Dialect() == store.Postgres {
				b.ReportMetric(pgCPU.Seconds()*1e6/float64(done), "pg-µs/delivery")
			}
		})
	}
}

// backendPIDs are the process ids of the PostgreSQL backends of st's database; none on SQLite.
func backendPIDs(b *testing.B, st *store.Store) []int {
	var pids []int
	if st.Dialect() != store.Postgres {
		return nil
	}
	if err := st.DB().Raw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(&pids).Error; err != nil {
		b.Fatal(err)
	}
	return pids
}

// onCPU is the time processes pids have spent on a CPU so far, in nanoseconds from
// /proc/PID/schedstat (finer than backendCPU's clock ticks; PostgreSQL runs on this machine).
func onCPU(b *testing.B, pids []int) time.Duration {
	var ns int64
	for _, pid := range pids {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
		if err != nil {
			b.Skipf("PostgreSQL's backends are not on this machine: %v", err)
		}
		n, _ := strconv.ParseInt(strings.Fields(string(stat))[0], 10, 64)
		ns += n
	}
	return time.Duration(ns)
}
