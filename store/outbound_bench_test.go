package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/store"
)

// BenchmarkFinishOutbound records batches of delivery receipts (FinishOutbound) for sent messages
// to new recipients, each with its message.delivered event and that event's webhook delivery, as
// the receipts do at load, and reports the time per message and, on PostgreSQL, its backends' CPU
// per message with the WAL records per message of the receipt's statement and of the events'
// statement. The project has one webhook endpoint, subscribed to message.delivered only, as in
// the e2e benchmark. It runs on SQLite, or on PostgreSQL when SWITCHBOARD_TEST_DATABASE_URL is set.
func BenchmarkFinishOutbound(b *testing.B) {
	ctx := context.Background()
	st, pg, send := benchSends(ctx, b)
	// sent writes n messages to new recipients and moves them to sent, out of the outbound queue,
	// as the dispatch leaves them; it returns their ids.
	sent := func(n int) []string {
		now := time.Now().UTC()
		sends := make([]store.OutboundSend, n)
		ids := make([]string, n)
		for i := range sends {
			sends[i] = send(now)
			ids[i] = sends[i].Message.ID
		}
		if _, err := st.InsertOutboundBatch(ctx, sends); err != nil {
			b.Fatal(err)
		}
		if err := st.DB().Exec("UPDATE messages SET status = 'sent', sent_at = ?, carrier_id = 'sim-' || id WHERE id IN ?", now, ids).Error; err != nil {
			b.Fatal(err)
		}
		if err := st.DB().Exec("DELETE FROM outbound_queue WHERE message_id IN ?", ids).Error; err != nil {
			b.Fatal(err)
		}
		return ids
	}
	// events are the message.delivered events of the finished messages, about the size of the
	// service's.
	events := func(fin []*store.Finished) ([]store.Event, error) {
		evs := make([]store.Event, 0, len(fin))
		for _, f := range fin {
			if f == nil {
				continue
			}
			e, err := store.NewEvent(f.ProjectID, f.AccountID, "message.delivered", map[string]any{"id": f.ID, "body": f.Body,
				"status": f.Status, "delivered_at": f.DeliveredAt, "sent_at": f.SentAt, "attachments": []any{}, "metadata": map[string]any{},
				"conversation": map[string]any{"id": f.ConversationID, "contact": map[string]any{"id": f.Contact.ID,
					"phone_number": f.Contact.PhoneNumber, "first_name": nil, "last_name": nil, "email": nil, "metadata": map[string]any{}},
					"phone_number": map[string]any{"id": f.PhoneNumber.ID, "number": f.PhoneNumber.Number, "type": "toll_free", "name": nil}}})
			if err != nil {
				return nil, err
			}
			evs = append(evs, e)
		}
		return evs, nil
	}
	// statements is the WAL records and execution time so far of the receipt's statement and of
	// the events' statement.
	statements := func() (recWAL, evWAL int64, recTime, evTime float64) {
		if !pg {
			return 0, 0, 0, 0
		}
		row := st.DB().Raw(`SELECT COALESCE(SUM(wal_records) FILTER (WHERE query LIKE '%UPDATE messages AS m%'), 0)::bigint,
				COALESCE(SUM(wal_records) FILTER (WHERE query LIKE 'WITH ev AS%'), 0)::bigint,
				COALESCE(SUM(total_exec_time) FILTER (WHERE query LIKE '%UPDATE messages AS m%'), 0),
				COALESCE(SUM(total_exec_time) FILTER (WHERE query LIKE 'WITH ev AS%'), 0)
			FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Row()
		if err := row.Scan(&recWAL, &evWAL, &recTime, &evTime); err != nil {
			b.Fatal(err)
		}
		return recWAL, evWAL, recTime, evTime
	}
	rules := store.OutcomeRules{BlockReasons: []string{"invalid_number"}, BlockFor: time.Hour}
	for _, size := range []int{20, 86, 200} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			msgs := 0
			pids := backendPIDs(b, st)
			var pgCPU time.Duration
			rw, ew, rt, et := statements()
			for b.Loop() {
				b.StopTimer()
				ids := sent(size)
				outs := make([]store.Outcome, size)
				at := time.Now().UTC()
				for i, id := range ids {
					outs[i] = store.Outcome{ID: id, Status: store.StatusDelivered, At: at, CarrierID: "sim-" + id}
				}
				b.StartTimer()
				before := onCPU(b, pids)
				if err := st.FinishOutbound(ctx, outs, rules, events); err != nil {
					b.Fatal(err)
				}
				pgCPU += onCPU(b, pids) - before
				msgs += size
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs)/1000, "µs/msg")
			if pg {
				b.ReportMetric(pgCPU.Seconds()*1e6/float64(msgs), "pg-µs/msg")
				rw2, ew2, rt2, et2 := statements()
				b.ReportMetric(float64(rw2-rw)/float64(msgs), "rcpt-wal/msg")
				b.ReportMetric(float64(ew2-ew)/float64(msgs), "ev-wal/msg")
				b.ReportMetric((rt2-rt)*1000/float64(msgs), "rcpt-µs/msg")
				b.ReportMetric((et2-et)*1000/float64(msgs), "ev-µs/msg")
			}
		})
	}
}
