package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/store"
)

// BenchmarkInsertOutboundBatch writes batches of sends to new recipients (each a new contact,
// conversation and conversation.created event with its message and queue row), as the group
// commit of sends does at load, one batch at a time, and reports the time per message and, on
// PostgreSQL, its backends' CPU and the statement's WAL records per message. The project has one
// webhook endpoint, subscribed to message.delivered only, as in the e2e benchmark. It runs on
// SQLite, or on PostgreSQL when SWITCHBOARD_TEST_DATABASE_URL is set.
func BenchmarkInsertOutboundBatch(b *testing.B) {
	ctx := context.Background()
	st, pg, send := benchSends(ctx, b)
	// statementWAL is the WAL records and calls so far of the database's statements that insert
	// messages.
	statementWAL := func() (wal, calls int64) {
		if !pg {
			return 0, 0
		}
		row := st.DB().Raw(`SELECT COALESCE(SUM(wal_records), 0)::bigint, COALESCE(SUM(calls), 0)::bigint FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE '%INSERT INTO messages%'`).Row()
		if err := row.Scan(&wal, &calls); err != nil {
			b.Fatal(err)
		}
		return wal, calls
	}
	for _, size := range []int{1, 9, 30, 60} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			msgs := 0
			cpu := backendCPU(b, st)
			wal, _ := statementWAL()
			for b.Loop() {
				b.StopTimer()
				sends := batchOf(send, size)
				b.StartTimer()
				written, err := st.InsertOutboundBatch(ctx, sends)
				if err != nil {
					b.Fatal(err)
				}
				for _, w := range written {
					if !w {
						b.Fatal("a send was not written")
					}
				}
				msgs += size
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs)/1000, "µs/msg")
			if pg {
				b.ReportMetric((backendCPU(b, st)-cpu).Seconds()*1e6/float64(msgs), "pg-µs/msg")
				w, _ := statementWAL()
				b.ReportMetric(float64(w-wal)/float64(msgs), "wal/msg")
			}
		})
	}
}

// BenchmarkLoadSendContexts reads the contexts of batches of sends to new recipients, as the
// group commit of sends does at load, beside 20,000 other contacts of the account (on PostgreSQL),
// and reports the time per send and, on PostgreSQL, its backends' CPU per send.
func BenchmarkLoadSendContexts(b *testing.B) {
	ctx := context.Background()
	st, p, a, _ := benchSender(ctx, b)
	if st.Dialect() == store.Postgres {
		if err := st.DB().Exec(`INSERT INTO contacts (id, project_id, account_id, phone_number, metadata, created_at, updated_at)
			SELECT 'ctc_' || g, ?, ?, '+1416' || lpad(g::text, 7, '0'), '{}', now(), now() FROM generate_series(1, 20000) g`, p.ID, a.ID).Error; err != nil {
			b.Fatal(err)
		}
	}
	handsets := 0
	for _, size := range []int{1, 9, 30} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			msgs := 0
			cpu := backendCPU(b, st)
			for b.Loop() {
				keys := make([]store.SendContextKey, size)
				for i := range keys {
					handsets++
					keys[i] = store.SendContextKey{ProjectID: p.ID, AccountID: a.ID, Recipient: fmt.Sprintf("+1647%07d", handsets)}
				}
				scs, _, err := st.LoadSendContexts(ctx, keys)
				if err != nil || scs[0] == nil || scs[0].Sender == nil {
					b.Fatal("no context", err)
				}
				msgs += size
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs)/1000, "µs/msg")
			if st.Dialect() == store.Postgres {
				b.ReportMetric((backendCPU(b, st)-cpu).Seconds()*1e6/float64(msgs), "pg-µs/msg")
			}
		})
	}
}

// BenchmarkLoadSendContextsAccounts reads the contexts of batches of 256 sends to new
// recipients shared among several accounts of one project, each account with its number, and
// reports the time and, on PostgreSQL, its backends' CPU per batch.
func BenchmarkLoadSendContextsAccounts(b *testing.B) {
	ctx := context.Background()
	st, p, first, _ := benchSender(ctx, b)
	accounts := []string{first.ID}
	for _, n := range []int{1, 8, 32, 33, 64, 256} {
		for len(accounts) < n {
			a := &store.Account{ProjectID: p.ID, Name: fmt.Sprintf("bench %d", len(accounts))}
			if err := st.CreateAccount(ctx, a); err != nil {
				b.Fatal(err)
			}
			number := &store.PhoneNumber{ProjectID: p.ID, AccountID: &a.ID, Number: fmt.Sprintf("+1800556%04d", len(accounts)),
				Type: store.NumberTollFree, Country: "US", Carrier: "sim"}
			if err := st.InsertPhoneNumber(ctx, number); err != nil {
				b.Fatal(err)
			}
			accounts = append(accounts, a.ID)
		}
		b.Run(fmt.Sprintf("accounts=%d", n), func(b *testing.B) {
			keys := make([]store.SendContextKey, 256)
			for i := range keys {
				keys[i] = store.SendContextKey{ProjectID: p.ID, AccountID: accounts[i%n], Recipient: fmt.Sprintf("+1647%07d", i)}
			}
			cpu := backendCPU(b, st)
			for b.Loop() {
				scs, _, err := st.LoadSendContexts(ctx, keys)
				if err != nil || scs[255] == nil || scs[255].Sender == nil {
					b.Fatal("no context", err)
				}
			}
			if st.Dialect() == store.Postgres {
				b.ReportMetric((backendCPU(b, st)-cpu).Seconds()*1e6/float64(b.N), "pg-µs/batch")
			}
		})
	}
}

// benchSends opens benchSender's store with a webhook endpoint subscribed to message.delivered
// only, as in the e2e benchmark (and, on PostgreSQL, pg_stat_statements), and returns it with
// whether it is PostgreSQL and a maker of plain sends to new recipients, each with its new
// contact, conversation and conversation.created event.
func benchSends(ctx context.Context, b *testing.B) (st *store.Store, pg bool, send func(now time.Time) store.OutboundSend) {
	st, p, a, number := benchSender(ctx, b)
	ep := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: p.ID, URL: "https://hooks.example/bench",
		Events: "message.delivered", Secret: "whsec_bench", Enabled: true}
	if err := st.CreateWebhookEndpoint(ctx, ep); err != nil {
		b.Fatal(err)
	}
	pg = st.Dialect() == store.Postgres
	if pg {
		if err := st.DB().Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").Error; err != nil {
			b.Skipf("pg_stat_statements: %v", err)
		}
	}
	handsets := 0
	send = func(now time.Time) store.OutboundSend {
		handsets++
		to := fmt.Sprintf("+1647%07d", handsets)
		c := store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: p.ID, AccountID: a.ID, PhoneNumber: to, Metadata: store.Metadata{},
			CreatedAt: now, UpdatedAt: now}
		cv := store.Conversation{ID: store.NewID(store.PrefixConversation), ProjectID: p.ID, AccountID: a.ID,
			PhoneNumberID: number.ID, ContactID: c.ID, CreatedAt: now}
		ev, err := store.NewEvent(p.ID, a.ID, "conversation.created", map[string]any{"id": cv.ID, "contact": map[string]any{
			"id": c.ID, "phone_number": to, "first_name": nil, "last_name": nil, "email": nil, "metadata": map[string]any{}},
			"phone_number": map[string]any{"id": number.ID, "number": number.Number, "type": "toll_free", "name": nil}})
		if err != nil {
			b.Fatal(err)
		}
		body := "Your code is 123456. It expires in 10 minutes."
		m := &store.Message{ID: store.NewID(store.PrefixMessage), ProjectID: p.ID, AccountID: a.ID, ConversationID: cv.ID,
			PhoneNumberID: number.ID, SenderType: number.Type, ContactID: c.ID, Direction: store.DirectionOutbound,
			Status: store.StatusQueued, Body: &body, Metadata: store.Metadata{}, Encoding: "gsm7", Segments: 1, Type: "sms",
			FromNumber: number.Number, ToNumber: to, Carrier: "sim", CreatedAt: now, UpdatedAt: now}
		return store.OutboundSend{Message: m, New: &store.NewPair{Contact: c, Conversation: cv, Event: ev}}
	}
	return st, pg, send
}

// batchOf makes size sends with send, all at the time of the call.
func batchOf(send func(now time.Time) store.OutboundSend, size int) []store.OutboundSend {
	now := time.Now().UTC()
	sends := make([]store.OutboundSend, size)
	for i := range sends {
		sends[i] = send(now)
	}
	return sends
}

// benchSender opens a test store (closed when b ends) with a project, an account and its number.
func benchSender(ctx context.Context, b *testing.B) (*store.Store, *store.Project, *store.Account, *store.PhoneNumber) {
	st, cleanup, err := store.OpenTest(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cleanup)
	p, err := st.CreateProject(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	a := &store.Account{ProjectID: p.ID, Name: "bench"}
	if err := st.CreateAccount(ctx, a); err != nil {
		b.Fatal(err)
	}
	number := &store.PhoneNumber{ProjectID: p.ID, AccountID: &a.ID, Number: "+18005550100", Type: store.NumberTollFree,
		Country: "US", Carrier: "sim"}
	if err := st.InsertPhoneNumber(ctx, number); err != nil {
		b.Fatal(err)
	}
	return st, p, a, number
}

// BenchmarkSendFlush writes batches of sends to new recipients beside 20,000 other contacts of
// the account, on PostgreSQL, the two ways a flush of the group commit of sends does: read, a
// read of the contexts (LoadSendContexts) then the write (InsertOutboundBatch); plain, the
// write of sends of a plain context that checks the context itself (InsertOutboundPlain). It
// reports the time and the backends' CPU per message.
func BenchmarkSendFlush(b *testing.B) {
	ctx := context.Background()
	st, pg, send := benchSends(ctx, b)
	if !pg {
		b.Skip("InsertOutboundPlain is PostgreSQL's")
	}
	var p, a, number string
	if err := st.DB().Raw(`SELECT project_id, account_id, id FROM phone_numbers WHERE account_id IS NOT NULL`).Row().Scan(&p, &a, &number); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO contacts (id, project_id, account_id, phone_number, metadata, created_at, updated_at)
			SELECT 'ctc_' || g, ?, ?, '+1416' || lpad(g::text, 7, '0'), '{}', now(), now() FROM generate_series(1, 20000) g WHERE ? <> ''`,
		`INSERT INTO toll_free_campaigns (id, project_id, account_id, phone_number_id, carrier, status, params, created_at, updated_at)
			VALUES ('tfc_bench', ?, ?, ?, 'sim', 'active', '{}', now(), now())`,
	} {
		if err := st.DB().Exec(q, p, a, number).Error; err != nil {
			b.Fatal(err)
		}
	}
	sc, err := st.LoadSendContext(ctx, p, a, "", "")
	if err != nil || sc.Sender == nil {
		b.Fatal("no sender", err)
	}
	plain := []store.PlainContext{{ProjectID: p, AccountID: a, Sender: sc.Sender.PhoneNumber}}
	for _, size := range []int{1, 9, 30} {
		for _, way := range []string{"read", "plain"} {
			b.Run(fmt.Sprintf("batch=%d/%s", size, way), func(b *testing.B) {
				msgs := 0
				cpu := backendCPU(b, st)
				for b.Loop() {
					b.StopTimer()
					sends := batchOf(send, size)
					b.StartTimer()
					if way == "read" {
						keys := make([]store.SendContextKey, size)
						for i, s := range sends {
							keys[i] = store.SendContextKey{ProjectID: p, AccountID: a, Recipient: s.Message.ToNumber}
						}
						if _, _, err := st.LoadSendContexts(ctx, keys); err != nil {
							b.Fatal(err)
						}
						if _, err := st.InsertOutboundBatch(ctx, sends); err != nil {
							b.Fatal(err)
						}
					} else {
						ps := make([]store.PlainSend, size)
						for i, s := range sends {
							ps[i] = store.PlainSend{Message: s.Message, New: s.New}
						}
						res, _, err := st.InsertOutboundPlain(ctx, plain, ps)
						if err != nil {
							b.Fatal(err)
						}
						if !res[size-1].Written {
							b.Fatal("a send was not written")
						}
					}
					msgs += size
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs)/1000, "µs/msg")
				b.ReportMetric((backendCPU(b, st)-cpu).Seconds()*1e6/float64(msgs), "pg-µs/msg")
			})
		}
	}
}
