package service

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// The group commit of sends. Concurrent plain sends (no demo key, link shortening, attachments,
// Idempotency-Key, or contact to create with outbound disabled) share one read of their contexts
// and one write: on PostgreSQL one statement each for the whole batch (store.LoadSendContexts,
// store.InsertOutboundBatch), on SQLite one transaction for the writes. On PostgreSQL the sends of
// a context that needed nothing special when a flush last read it (plainContexts) skip the read:
// one statement writes them and checks their contexts itself (store.InsertOutboundPlain), and
// those it does not write take the read and the write. A lone send is flushed at once
// (kit.Batcher): batches form only while a flush is busy, so batching adds no wait.
//
// Each send of a batch gets its own outcome: its error (opted out, archived …) fails it alone. A
// send the batch cannot write, having written nothing of it, goes Send's own way after the batch:
// a known contact without a conversation with the sender, a second send of the batch to a new
// recipient, or a contact someone else created meanwhile.
const (
	// sendBatchMax is the most sends of one flush.
	sendBatchMax = 256
	// sendBatchParallel is the most flushes at a time on PostgreSQL; sendBatchParallelSQLite on
	// SQLite, whose single writer makes more flushes wait for each other in its busy handler
	// (measured at c=64: 4 flushes doubled the p99 of 2 for no more throughput). On PostgreSQL
	// a flush is one statement that reads and one that writes, and each costs PostgreSQL about as
	// much for the statement (its executor's start, the commit) as for 10 sends in it
	// (BenchmarkInsertOutboundBatch, BenchmarkLoadSendContexts): one flush at a time, the sends
	// that came while it ran all in the next, makes the batches larger. In the e2e benchmark
	// (c=64), one run each: 4 flushes, 9 sends a flush, 2,838 msg/s, accepted p99 61 ms, 0.523 ms
	// of CPU per message; 2, 16 sends, 3,267/s, 48 ms, 0.488 ms; 1, 28 sends, 3,714/s, 42 ms,
	// 0.422 ms. A lone send is still flushed at once.
	sendBatchParallel       = 1
	sendBatchParallelSQLite = 2
)

// The flushes of sends run their read and write on a connection of their own while sends come
// (Messages.sendConn, a heldConn as the receipts' is: store.Pinned, given back after 2 s
// without a flush). The read and the write are the same two statements at every flush, and
// PostgreSQL keeps their plans per connection and drops them on every connection they ran on
// each time a table they touch changes in pg_class, which every VACUUM of the outbound queue does
// (queue_tidy.go): on the pool's connections in turn, the write was planned again
// on each of them after each VACUUM, and each of their backends rebuilt its cache of the tables
// and indexes it writes. On one connection its indexes' rightmost pages are also still where that
// backend last inserted (B-tree inserts of ascending keys skip the descent from the root). 1,000
// writes of 30 sends to new recipients, VACUUM of the outbound queue every 2,000 rows, one
// connection against eight in turn (3 runs each): 15-21 plans against 124-155, and 26.7-29.7
// against 34.0-44.3 µs of PostgreSQL's CPU per send. The flushes run one at a time on PostgreSQL
// (sendBatchParallel), so holding one connection makes none wait.

// sendBatches returns the group commit of m's sends.
func (m *Messages) sendBatches() *store.Batcher[*sendItem, sendOutcome] {
	parallel := sendBatchParallel
	if m.cfg.Store.Dialect() == store.SQLite {
		parallel = sendBatchParallelSQLite
	}
	return store.NewBatcher(sendBatchMax, parallel, m.flushSends)
}

// sendItem is a validated send waiting for its batch.
type sendItem struct {
	p       SendParams
	from    string
	contact store.Contact
	// msg is the message as Send built it; the flush fills a copy.
	msg store.Message
	now time.Time
	// queued is when the send joined the batcher (for switchboard_send_batch_seconds).
	queued time.Time
}

// sendOutcome is what the batch did with a send: its view when written, its error when it failed,
// neither when Send must write it itself.
type sendOutcome struct {
	view *store.MessageView
	err  error
}

// newSendBatchSizes is the histogram of the sends per flush.
func newSendBatchSizes() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "switchboard_send_batch_size",
		Help:    "Sends (POST /accounts/{id}/messages) that shared one read and one write to the database.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
}

// Phases of a batched send, the label of switchboard_send_batch_seconds.
const (
	sendPhaseWait  = "wait"  // from joining the batcher to its flush's start
	sendPhaseRead  = "read"  // the flush's read of the sends' contexts
	sendPhaseWrite = "write" // the flush's write, commit included
)

// newSendBatchTimes is the histogram of the time a batched send spends in each phase.
func newSendBatchTimes() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "switchboard_send_batch_seconds",
		Help:    "Time of a batched send (POST /accounts/{id}/messages) by phase: wait (from joining the group commit to its flush), read (the flush's read of the contexts), write (the flush's write and commit); read and write are counted once per statement.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"phase"})
}

// batchable reports whether a send may join a batch.
func batchable(ctx context.Context, p SendParams, contact store.Contact) bool {
	return !p.Demo && !p.ShortenLinks && len(p.Attachments) == 0 && !contact.OutboundDisabled && !store.HasIdempotencyClaim(ctx)
}

// flushSends writes a batch of sends: on PostgreSQL first those of contexts kept as plain, in
// one statement that checks them (flushPlain), then the others and those that statement did not
// write, after a read of their contexts (flushRead), each checked as Send does.
func (m *Messages) flushSends(ctx context.Context, items []*sendItem) ([]sendOutcome, error) {
	m.sendBatchSizes.Observe(float64(len(items)))
	start := time.Now()
	wait := m.sendBatchTimes.WithLabelValues(sendPhaseWait)
	for _, it := range items {
		wait.Observe(start.Sub(it.queued).Seconds())
	}
	st := m.sendConn.take(m.cfg.Store)
	defer m.sendConn.done()
	out := make([]sendOutcome, len(items))
	rest := make([]int, 0, len(items))
	if m.cfg.Store.Dialect() != store.Postgres {
		for i := range items {
			rest = append(rest, i)
		}
	} else {
		var err error
		if rest, err = m.flushPlain(ctx, st, items, out); err != nil {
			return nil, err
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	return out, m.flushRead(ctx, st, items, rest, out)
}

// plainContextsMax is the most contexts plainContexts keeps; it forgets them all when it would
// keep more.
const plainContextsMax = 4096

// plainContexts are the contexts of sends that needed nothing special when a flush read them
// (store.PlainContext), by project, account and sender reference. What it keeps is only where a
// flush starts: InsertOutboundPlain checks each context in the statement that writes its sends,
// and a context that did not hold is forgotten and read again.
type plainContexts struct {
	mu   sync.Mutex
	byID map[[3]string]*store.PlainContext
}

func (p *plainContexts) get(k [3]string) *store.PlainContext {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[k]
}

// keep remembers c, or forgets the context of k when c is nil.
func (p *plainContexts) keep(k [3]string, c *store.PlainContext) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case c == nil:
		delete(p.byID, k)
	case p.byID == nil || len(p.byID) >= plainContextsMax:
		p.byID = map[[3]string]*store.PlainContext{k: c}
	default:
		p.byID[k] = c
	}
}

// contextOf is the key of a send's context in plainContexts.
func contextOf(it *sendItem) [3]string { return [3]string{it.p.ProjectID, it.p.AccountID, it.from} }

// flushPlain writes the sends of items whose contexts plainContexts keeps, one to each new
// recipient of an account, with store.InsertOutboundPlain, fills their outcomes, and returns the
// positions of the others for flushRead. It forgets the contexts that did not hold.
func (m *Messages) flushPlain(ctx context.Context, st *store.Store, items []*sendItem, out []sendOutcome) ([]int, error) {
	rest := make([]int, 0, len(items))
	var (
		contexts []store.PlainContext
		keys     [][3]string
		sends    []store.PlainSend
		whose    []int
		msgs     []store.Message
	)
	index := map[[3]string]int{}
	recipients := map[[2]string]bool{}
	for i, it := range items {
		k := contextOf(it)
		pc := m.plain.get(k)
		pair := [2]string{it.p.AccountID, it.msg.ToNumber}
		if pc == nil || recipients[pair] {
			rest = append(rest, i)
			continue
		}
		recipients[pair] = true
		c, ok := index[k]
		if !ok {
			c = len(contexts)
			index[k] = c
			contexts, keys = append(contexts, *pc), append(keys, k)
		}
		whose = append(whose, i)
		msgs = append(msgs, it.msg)
		sends = append(sends, store.PlainSend{Context: c})
	}
	if len(sends) == 0 {
		return rest, nil
	}
	todo, at := sends[:0:0], whose[:0:0]
	for j, s := range sends {
		it := items[whose[j]]
		np, err := newPair(it.p, it.contact, &contexts[s.Context].Sender, &msgs[j], it.now)
		if err != nil {
			out[whose[j]].err = err
			continue
		}
		s.Message, s.New = &msgs[j], np
		todo, at = append(todo, s), append(at, whose[j])
	}
	start := time.Now()
	res, held, err := st.InsertOutboundPlain(ctx, contexts, todo)
	if err != nil {
		return nil, err
	}
	m.sendBatchTimes.WithLabelValues(sendPhaseWrite).Observe(time.Since(start).Seconds())
	for c, ok := range held {
		if !ok {
			m.plain.keep(keys[c], nil)
		}
	}
	for j, r := range res {
		i := at[j]
		if !r.Written {
			rest = append(rest, i)
			continue
		}
		s := todo[j]
		view := &store.MessageView{Attachments: []store.Attachment{}, PhoneNumber: contexts[s.Context].Sender, Message: *s.Message}
		if r.Known != nil {
			view.Contact = *r.Known.Contact
		} else {
			view.Contact = s.New.Contact
		}
		out[i].view = view
	}
	sort.Ints(rest)
	return rest, nil
}

// flushRead reads the contexts of the sends of items at positions at, checks each as Send does,
// writes those that pass in one go, and keeps the contexts that needed nothing special.
func (m *Messages) flushRead(ctx context.Context, st *store.Store, items []*sendItem, at []int, out []sendOutcome) error {
	start := time.Now()
	keys := make([]store.SendContextKey, len(at))
	for j, i := range at {
		it := items[i]
		keys[j] = store.SendContextKey{ProjectID: it.p.ProjectID, AccountID: it.p.AccountID, Ref: it.from, Recipient: it.msg.ToNumber}
	}
	scs, errs, err := st.LoadSendContexts(ctx, keys)
	if err != nil {
		return err
	}
	read := time.Now()
	m.sendBatchTimes.WithLabelValues(sendPhaseRead).Observe(read.Sub(start).Seconds())
	postgres := m.cfg.Store.Dialect() == store.Postgres
	sends := make([]store.OutboundSend, 0, len(at))
	views := make([]*store.MessageView, 0, len(at))
	whose := make([]int, 0, len(at))
	fresh := map[[2]string]bool{}
	for j, i := range at {
		it := items[i]
		if errs[j] != nil {
			out[i].err = errs[j]
			continue
		}
		sc, msg := scs[j], it.msg
		if sc.QuietHours {
			if err := m.holdForQuietHours(ctx, sc, &msg, it.now); err != nil {
				out[i].err = err
				continue
			}
		}
		if sc.Archived {
			out[i].err = Errorf(TypeAccountArchived, "the account is archived and cannot send messages")
			continue
		}
		sender, err := m.sender(ctx, st, it.p, it.from, sc.Sender)
		if err != nil {
			out[i].err = err
			continue
		}
		if postgres && !sc.QuietHours {
			m.plain.keep(contextOf(it), &store.PlainContext{ProjectID: it.p.ProjectID, AccountID: it.p.AccountID, Ref: it.from,
				Sender: *sender})
		}
		view := &store.MessageView{Attachments: []store.Attachment{}, PhoneNumber: *sender}
		send := store.OutboundSend{Message: &msg}
		switch known := sc.Known; {
		case known == nil:
			continue
		case known.Contact == nil:
			pair := [2]string{it.p.AccountID, msg.ToNumber}
			if fresh[pair] {
				continue // one new contact per batch: this send finds it made, after the batch
			}
			fresh[pair] = true
			if send.New, err = newPair(it.p, it.contact, sender, &msg, it.now); err != nil {
				out[i].err = err
				continue
			}
			view.Contact = send.New.Contact
		case known.Conversation == nil:
			continue // the conversation is made in Send's transaction
		default:
			if err := sendable(known.Contact, msg.ToNumber); err != nil {
				out[i].err = err
				continue
			}
			withPair(&msg, known.Conversation.ID, known.Contact.ID, sender)
			view.Contact = *known.Contact
		}
		sends, views, whose = append(sends, send), append(views, view), append(whose, i)
	}
	if len(sends) == 0 {
		return nil
	}
	written, err := st.InsertOutboundBatch(ctx, sends)
	if err != nil {
		return err
	}
	m.sendBatchTimes.WithLabelValues(sendPhaseWrite).Observe(time.Since(read).Seconds())
	for j, i := range whose {
		if written[j] {
			views[j].Message = *sends[j].Message
			out[i].view = views[j]
		}
	}
	return nil
}

// sendable refuses a send to a contact who opted out or whose outbound messaging is disabled.
func sendable(c *store.Contact, recipient string) error {
	switch {
	case c.OptedOut:
		return Errorf(TypeOptedOut, "the contact %s has opted out of messages from this account", recipient)
	case c.OutboundDisabled:
		return Errorf(TypeOutboundDisabled, "outbound messaging is disabled for the contact %s", recipient)
	}
	return nil
}

// withPair sets the conversation, contact and sender of an outbound message.
func withPair(msg *store.Message, conversationID, contactID string, sender *store.PhoneNumber) {
	msg.ConversationID, msg.ContactID = conversationID, contactID
	msg.PhoneNumberID, msg.SenderType, msg.FromNumber, msg.Carrier = sender.ID, sender.Type, sender.Number, sender.Carrier
}

// newPair makes the contact (from contact), conversation with sender and conversation.created
// event of a send to a recipient the account has no contact for, and names them in msg.
func newPair(p SendParams, contact store.Contact, sender *store.PhoneNumber, msg *store.Message, now time.Time) (*store.NewPair, error) {
	c := contact
	c.ID, c.ProjectID, c.AccountID, c.CreatedAt, c.UpdatedAt = store.NewID(store.PrefixContact), p.ProjectID, p.AccountID, now, now
	if c.Metadata == nil {
		c.Metadata = store.Metadata{}
	}
	cv := store.Conversation{ID: store.NewID(store.PrefixConversation), ProjectID: p.ProjectID, AccountID: p.AccountID,
		PhoneNumberID: sender.ID, ContactID: c.ID, CreatedAt: now}
	ev, err := store.NewEvent(p.ProjectID, p.AccountID, webhooks.EventConversationCreated, webhooks.ConversationCreated(&cv, &c, sender))
	if err != nil {
		return nil, err
	}
	ev.Traceparent = msg.Traceparent // the trace of the request that sent it
	withPair(msg, cv.ID, c.ID, sender)
	return &store.NewPair{Contact: c, Conversation: cv, Event: ev}, nil
}
