package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// BenchmarkSimOutbox puts batches of submissions into the simulated carrier's outbox with their
// receipts, as the carrier stores a dispatch claim's submissions, and reports the time per
// message and, on PostgreSQL, its backends' CPU (on a CPU, from schedstat): what a batch costs
// beside its messages. It runs on SQLite, or on PostgreSQL when SWITCHBOARD_TEST_DATABASE_URL is
// set.
func BenchmarkSimOutbox(b *testing.B) {
	ctx := context.Background()
	st, cleanup, err := store.OpenTest(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cleanup)
	x := st.Sim()
	n := 0
	for _, batch := range []int{1, 10, 50, 150} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			msgs := 0
			pids := backendPIDs(b, st)
			var pgCPU time.Duration
			for b.Loop() {
				es := make([]*sim.OutboxEntry, batch)
				for i := range es {
					n++
					es[i] = &sim.OutboxEntry{Reference: store.NewID(store.PrefixMessage), CarrierID: store.NewID("sim"), From: "+18005550100",
						To: fmt.Sprintf("+1647%07d", n), Body: "Your code is 123456. It expires in 10 minutes.", Parts: 1, Encoding: "gsm7",
						Media: []string{}, Outcome: "delivered", CreatedAt: time.Now().UTC()}
				}
				began := onCPU(b, pids)
				_, err := x.AddToOutbox(ctx, es, func(first map[string]string) ([]sim.OwedReceipt, time.Time) {
					rs := make([]sim.OwedReceipt, 0, len(es))
					for _, e := range es {
						rs = append(rs, sim.OwedReceipt{Reference: e.Reference, CarrierID: first[e.Reference], Outcome: e.Outcome})
					}
					return rs, time.Now().Add(time.Minute)
				})
				if err != nil {
					b.Fatal(err)
				}
				pgCPU += onCPU(b, pids) - began
				msgs += batch
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs)/1000, "µs/msg")
			if st.Dialect() == store.Postgres {
				b.ReportMetric(pgCPU.Seconds()*1e6/float64(msgs), "pg-µs/msg")
			}
		})
	}
}
