package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/store"
)

// BenchmarkDispatchQueue claims the outbound queue's messages and records them sent with their
// message.sent events, as a dispatch loop does at load, "batch" messages a claim, and reports the
// time per message and, on PostgreSQL, its backends' CPU (on a CPU, from schedstat) and the WAL
// records per message of the claim and of the record (from pg_stat_statements). The messages are
// written before the timer starts, to new recipients, as the group commit of sends writes them;
// the project's webhook endpoint takes message.delivered only, as in the e2e benchmark.
// It runs on SQLite, or on PostgreSQL when SWITCHBOARD_TEST_DATABASE_URL is set.
func BenchmarkDispatchQueue(b *testing.B) {
	ctx := context.Background()
	st, pg, send := benchSends(ctx, b)
	// enqueue writes n sends to new recipients, 30 to a statement.
	enqueue := func(n int) {
		for n > 0 {
			now := time.Now().UTC()
			sends := make([]store.OutboundSend, min(n, 30))
			for i := range sends {
				sends[i] = send(now)
			}
			if _, err := st.InsertOutboundBatch(ctx, sends); err != nil {
				b.Fatal(err)
			}
			n -= len(sends)
		}
	}
	// wal is the WAL records so far of the database's statements whose text has like.
	wal := func(like string) int64 {
		if !pg {
			return 0
		}
		var n int64
		row := st.DB().Raw(`SELECT COALESCE(SUM(wal_records), 0)::bigint FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE ?`, like).Row()
		if err := row.Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	const claimLike, sentLike = "%UPDATE outbound_queue o SET leased_until%", "%AS v(id, cid, tid)%"
	criteria := store.OutboundCriteria{Limit: 200, Lease: 10 * time.Second, Unpaced: []string{store.NumberTollFree},
		SlotTolerance: 5 * time.Millisecond, Expiry: time.Hour}
	for _, batch := range []int{30, 150} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			msgs := 0
			var pgCPU time.Duration
			pids := backendPIDs(b, st)
			claimWAL, sentWAL := wal(claimLike), wal(sentLike)
			for b.Loop() {
				b.StopTimer()
				enqueue(batch)
				b.StartTimer()
				began := onCPU(b, pids)
				criteria.Now = time.Now()
				works, err := st.ClaimOutbound(ctx, criteria)
				if err != nil {
					b.Fatal(err)
				}
				at := time.Now()
				sent := make([]store.Sent, 0, len(works))
				for _, w := range works {
					if !w.Claimed {
						b.Fatal("a message was not claimed")
					}
					ev, err := store.NewEvent(w.ProjectID, w.AccountID, "message.sent", map[string]any{"id": w.ID, "status": "sent"})
					if err != nil {
						b.Fatal(err)
					}
					sent = append(sent, store.Sent{ID: w.ID, CarrierID: "sim_" + w.ID, Event: ev, QueueRow: w.QueueRow})
				}
				if err := st.RecordSent(ctx, sent, at); err != nil {
					b.Fatal(err)
				}
				pgCPU += onCPU(b, pids) - began
				msgs += len(works)
			}
			if msgs == 0 {
				b.Fatal("no message claimed")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs)/1000, "µs/msg")
			if pg {
				b.ReportMetric(pgCPU.Seconds()*1e6/float64(msgs), "pg-µs/msg")
				b.ReportMetric(float64(wal(claimLike)-claimWAL)/float64(msgs), "claim-wal/msg")
				b.ReportMetric(float64(wal(sentLike)-sentWAL)/float64(msgs), "sent-wal/msg")
			}
		})
	}
}
