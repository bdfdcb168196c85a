package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// Dispatch: the outbound queue's messages to their carriers. Each dispatch loop claims a batch of
// due messages in one statement (those it can send at once move to `sending` in it), submits
// them to their carriers concurrently, and records the accepted submissions, with their
// message.sent events, in one statement. It is safe to run on every instance and to crash at any
// point: a claim is a lease (the rows come due again when it ends), and a message left `sending`
// is submitted again with the same reference, which the carrier answers with its first
// submission.

// Dispatch tuning.
const (
	// outboundBatch is the most messages of one claim.
	outboundBatch = 200
	// resubmitAfter is how long a claim holds its messages: a message still unrecorded after it
	// (its dispatcher presumably died with its process) is claimed and submitted again.
	resubmitAfter = 10 * time.Second
	// slotTolerance is how early a message may take its pacing slot.
	slotTolerance = 5 * time.Millisecond
	// submitConcurrency is how many submissions one dispatch loop has in flight at most.
	submitConcurrency = 200
	// dispatchPoll is how often an idle dispatch loop looks for due messages (wake-ups make it
	// look at once when this or another instance queues one).
	dispatchPoll = 100 * time.Millisecond
	// dispatchLinger is how long, after a claim of a partial batch, the instance's next claim waits
	// (claimTurn), wake-ups notwithstanding: under a steady stream of sends each claim then takes
	// what came in over the pause in one statement, rather than the one or two group commits of
	// sends since the last claim, so the claims, the records of the submissions and their commits
	// are fewer per message and leave the CPU and the WAL to the requests. After an empty or a full
	// claim the next does not wait, so a send after a quiet spell goes out at once (the loop
	// holding the turn takes its wake-up) and a backlog is claimed as fast as before.
	dispatchLinger = 40 * time.Millisecond
)

// dispatchLoops is how many dispatch loops an instance runs: several on PostgreSQL, where
// claims skip each other's rows, one on SQLite, whose single writer serialises them anyway.
func dispatchLoops(d store.Dialect) int {
	if d == store.Postgres {
		return 4
	}
	return 1
}

// StartDispatch starts the dispatch loops of this instance; Stop them with the returned Runner.
func (m *Messages) StartDispatch(ctx context.Context) *kit.Runner {
	r, ctx, draining := kit.NewRunner(ctx, true)
	g := &claimTurn{wake: m.cfg.Store.Subscribe(store.WakeOutbound), turn: make(chan struct{}, 1)}
	g.turn <- struct{}{}
	// The loops' claims run on one pinned connection and their records of submissions on another
	// (store.Pinned): they are the same two statements over and over, and PostgreSQL plans a
	// statement again on every connection it ran on each time a table it reads changes in pg_class
	// (every VACUUM of the outbound queue or of the webhook queue, which the record's events feed).
	// The claims take turns anyway; a record holds its connection a few milliseconds.
	claims, releaseClaims := m.cfg.Store.Pinned()
	records, releaseRecords := m.cfg.Store.Pinned()
	var loops sync.WaitGroup
	for range dispatchLoops(m.cfg.Store.Dialect()) {
		loops.Add(1)
		r.Go(func() {
			defer loops.Done()
			m.dispatchLoop(ctx, draining, g, claims, records)
		})
	}
	r.Go(func() {
		loops.Wait()
		releaseClaims()
		releaseRecords()
	})
	return r
}

// claimTurn is the turn to claim that an instance's dispatch loops pass round: one loop claims at a
// time, and the others dispatch what they claimed meanwhile. It carries when the next claim may
// be: at once after a full batch (more are due, and the next loop claims them while this one
// dispatches), dispatchLinger after a partial one, and after a wake-up or the poll when the last
// claim found nothing. So under a steady stream of sends the instance claims once per
// dispatchLinger whatever its number of loops, each claim taking what came in over the pause,
// where each loop had paused on its own and the loops idle meanwhile had claimed at every
// wake-up (a claim every 13 ms at 2,500 messages a second, 31 messages a claim).
type claimTurn struct {
	turn chan struct{}
	wake <-chan struct{}
	// next and idle belong to the loop holding the turn.
	next time.Time
	idle bool
}

// dispatchLoop claims, in its turn, through claims and dispatches batches, recording them through
// records, until draining closes or ctx ends.
func (m *Messages) dispatchLoop(ctx context.Context, draining <-chan struct{}, g *claimTurn, claims, records *store.Store) {
	for !kit.Stopping(ctx, draining) {
		select {
		case <-g.turn:
		case <-draining:
			return
		case <-ctx.Done():
			return
		}
		works := m.claimInTurn(ctx, draining, claims, g)
		g.turn <- struct{}{}
		if len(works) > 0 {
			m.dispatchBatch(ctx, records, works)
		}
	}
}

// claimInTurn waits, holding the turn, until the next claim may be, and claims until it finds
// messages (or the loop stops).
func (m *Messages) claimInTurn(ctx context.Context, draining <-chan struct{}, st *store.Store, g *claimTurn) []store.OutboundWork {
	backoff := dispatchPoll
	for !kit.Stopping(ctx, draining) {
		if g.idle {
			kit.Sleep(ctx, draining, g.wake, nil, m.idleWait())
			g.idle = false
		} else if d := time.Until(g.next); d > 0 {
			kit.Sleep(ctx, draining, nil, nil, d)
		}
		if kit.Stopping(ctx, draining) {
			return nil
		}
		works, err := st.ClaimOutbound(ctx, m.criteria())
		if err != nil {
			backoff = kit.ClaimFailed(ctx, draining, m.cfg.Logger, "claim outbound messages", err, backoff)
			continue
		}
		switch {
		case len(works) == 0:
			g.idle = true
			continue
		case len(works) == outboundBatch:
			g.next = time.Time{}
		case m.cfg.Store.Dialect() == store.Postgres:
			g.next = time.Now().Add(dispatchLinger)
		default:
			// SQLite's one loop looks again when woken, as after an empty claim.
			g.idle = true
		}
		return works
	}
	return nil
}

// idleWait is how long an idle loop waits before it looks again, unless woken.
func (m *Messages) idleWait() time.Duration {
	if m.cfg.Store.Dialect() == store.SQLite {
		return dispatchPoll / 2
	}
	return dispatchPoll
}

// criteria are the rules a claim applies.
func (m *Messages) criteria() store.OutboundCriteria {
	var unpaced []string
	for _, t := range []string{store.NumberLocal, store.NumberTollFree, store.NumberShortCode, store.NumberDemo} {
		if m.cfg.Pacing.interval(t) == 0 {
			unpaced = append(unpaced, t)
		}
	}
	return store.OutboundCriteria{Clock: m.now, Limit: outboundBatch, Lease: resubmitAfter, Unpaced: unpaced,
		SlotTolerance: slotTolerance, Expiry: m.cfg.Expiry}
}

// dispatchBatch submits a claimed batch and records the outcome, the record of the submissions
// through st (the pinned store of the instance's records).
func (m *Messages) dispatchBatch(ctx context.Context, st *store.Store, works []store.OutboundWork) {
	var submit []*store.OutboundWork
	var settle []*store.OutboundWork
	for i := range works {
		w := &works[i]
		switch {
		case w.Claimed:
			submit = append(submit, w)
		case w.Status == store.StatusSending:
			// Its claim lapsed without a record (its dispatcher presumably died): submit again.
			submit = append(submit, w)
		default:
			settle = append(settle, w)
		}
	}
	if len(settle) > 0 {
		more, err := m.settle(ctx, settle)
		if err != nil {
			m.cfg.Logger.Warn("dispatch: settle claimed messages", "err", err)
		}
		submit = append(submit, more...)
	}
	if len(submit) == 0 {
		return
	}
	results := make([]submitResult, len(submit))
	sem := make(chan struct{}, submitConcurrency)
	var wg sync.WaitGroup
	// The runs of carriers that take batches go in waves: the first message of each run together,
	// then the second of each, and so on, so that one conversation's messages still reach the
	// carrier one after the other in the order they were sent. The others' runs go side by side.
	var waves [][]int
	for _, run := range byConversation(submit) {
		if m.batchable(submit, run) {
			waves = addWave(waves, run)
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, i := range run {
				w := submit[i]
				sctx := kit.WithTraceparent(ctx, w.Traceparent) // the trace of the request that sent it
				id, err := m.submit(sctx, &w.Message)
				results[i] = submitResult{id, err}
			}
		}()
	}
	for _, wave := range waves {
		m.submitWave(ctx, submit, wave, results)
	}
	wg.Wait()
	at := m.now()
	var sent []store.Sent
	for i, w := range submit {
		r := results[i]
		switch {
		case r.err != nil:
			// Failed for now: the message is due again after a backoff (its claim counts attempts).
			due := at.Add(submitBackoff(w.Attempts))
			if err := m.cfg.Store.RequeueOutbound(context.WithoutCancel(ctx), []string{w.ID}, due); err != nil {
				m.cfg.Logger.Warn("dispatch: requeue a failed submission", "message_id", w.ID, "err", err)
			}
		case r.carrierID != nil:
			ev, err := m.sentEvent(w, at, *r.carrierID)
			if err != nil {
				m.cfg.Logger.Error("dispatch: message.sent event", "message_id", w.ID, "err", err)
				continue
			}
			sent = append(sent, store.Sent{ID: w.ID, CarrierID: *r.carrierID, Event: ev, QueueRow: w.QueueRow})
		}
	}
	// The carriers have these messages: record them even if this instance is stopping.
	if err := st.RecordSent(context.WithoutCancel(ctx), sent, at); err != nil {
		m.cfg.Logger.Warn("dispatch: record sent messages; they are submitted again after their lease", "n", len(sent), "err", err)
	}
}

// batchable reports whether the messages works[i] for i in run (one conversation's) go to one
// carrier that takes batches (batchSubmitter) and need nothing fetched first (no attachments):
// those are submitted in waves (see dispatchBatch).
func (m *Messages) batchable(works []*store.OutboundWork, run []int) bool {
	first := works[run[0]].Carrier
	for _, i := range run {
		if works[i].Carrier != first || works[i].Type == TypeMMS {
			return false
		}
	}
	messenger, err := m.cfg.Carriers.Messenger(first)
	if err != nil {
		return false
	}
	_, ok := messenger.(batchSubmitter)
	return ok
}

// addWave adds a run to waves: its first message to the first wave, its second to the second,
// and so on.
func addWave(waves [][]int, run []int) [][]int {
	for k, i := range run {
		if k == len(waves) {
			waves = append(waves, nil)
		}
		waves[k] = append(waves[k], i)
	}
	return waves
}

// byConversation splits a batch into runs of the indexes of one conversation's messages, each in
// the order the messages were made (ids are time-ordered): a run is submitted one message after
// the other, and runs side by side, so messages to one person reach the carrier in the order they
// were sent (those held together, by quiet hours or a shared send_at, come due at once) while
// different people's go concurrently. It is an order within a claim: messages of one conversation
// claimed by two dispatchers at the same moment still go side by side.
func byConversation(works []*store.OutboundWork) [][]int {
	order := make([]int, len(works))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(works[a].ID, works[b].ID) })
	runs := map[string]int{}
	var out [][]int
	for _, i := range order {
		key := works[i].ConversationID
		if key == "" {
			key = works[i].ID
		}
		r, ok := runs[key]
		if !ok {
			r = len(out)
			runs[key] = r
			out = append(out, nil)
		}
		out[r] = append(out[r], i)
	}
	return out
}

// submitBackoff is how long a message whose submission failed for now waits before it is tried
// again, by its attempts so far: attempts⁴ seconds (as River's retries), at most 10 minutes.
func submitBackoff(attempts int) time.Duration {
	a := time.Duration(max(1, attempts))
	return min(a*a*a*a*time.Second, 10*time.Minute)
}

// sentEvent is a message's message.sent event, as it is once recorded sent at at.
func (m *Messages) sentEvent(w *store.OutboundWork, at time.Time, carrierID string) (store.Event, error) {
	v := store.MessageView{Message: w.Message, Contact: w.Contact, PhoneNumber: w.PhoneNumber}
	v.Status, v.SentAt, v.UpdatedAt = store.StatusSent, &at, at
	if carrierID != "" && v.CarrierID == nil {
		v.CarrierID = &carrierID
	}
	if v.Type != TypeSMS {
		atts, err := m.cfg.Store.MessageAttachmentsMeta(context.Background(), w.ID)
		if err != nil {
			return store.Event{}, err
		}
		v.Attachments = atts
	}
	e, err := store.NewEvent(v.ProjectID, v.AccountID, webhooks.EventMessageSent, m.messageData(&v))
	if err != nil {
		return store.Event{}, err
	}
	e.Traceparent = v.Traceparent
	return e, nil
}

// settle decides, in one transaction, what becomes of claimed messages that the claim did not move
// to `sending`: an expired one fails (expired), one to a blocked recipient fails with the block's
// reason, one of a paced sender takes its pacing slot (in creation order per sender) and is
// either sent now or due at its slot, and one that is already sent, final or canceled leaves the
// queue. It returns those it moved to `sending`.
func (m *Messages) settle(ctx context.Context, works []*store.OutboundWork) ([]*store.OutboundWork, error) {
	var out []*store.OutboundWork
	now := m.now()
	err := m.cfg.Store.TxAsync(ctx, func(tx *store.Store) error {
		out = out[:0]
		var paced []*store.OutboundWork
		var done []string
		for _, w := range works {
			switch w.Status {
			case store.StatusQueued, store.StatusScheduled:
			default:
				done = append(done, w.ID)
				continue
			}
			if !now.Before(m.queuedSince(&w.Message).Add(m.cfg.Expiry)) {
				if err := m.fail(ctx, tx, &w.Message, carriers.FailureExpired, now, &store.MessageView{Contact: w.Contact, PhoneNumber: w.PhoneNumber}); err != nil {
					return err
				}
				continue
			}
			if b := w.Block; b != nil && now.Before(b.RetryAfter) {
				if err := m.fail(ctx, tx, &w.Message, b.Reason, now, &store.MessageView{Contact: w.Contact, PhoneNumber: w.PhoneNumber}); err != nil {
					return err
				}
				continue
			}
			paced = append(paced, w)
		}
		if err := tx.DropOutbound(ctx, done); err != nil {
			return err
		}
		var err error
		out, err = m.pace(ctx, tx, paced, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pace gives each message of a paced sender without a slot its number's next slot, in the order
// the messages were created; those whose slot has come move to `sending` and are returned, the
// others are due at their slot.
func (m *Messages) pace(ctx context.Context, tx *store.Store, paced []*store.OutboundWork, now time.Time) ([]*store.OutboundWork, error) {
	slices.SortFunc(paced, func(a, b *store.OutboundWork) int { return strings.Compare(a.ID, b.ID) })
	fresh := map[string][]*store.OutboundWork{} // by sender number
	var senders []string
	for _, w := range paced {
		if w.NotBefore == nil {
			if fresh[w.PhoneNumberID] == nil {
				senders = append(senders, w.PhoneNumberID)
			}
			fresh[w.PhoneNumberID] = append(fresh[w.PhoneNumberID], w)
		}
	}
	for _, sender := range senders {
		group := fresh[sender]
		iv := m.cfg.Pacing.interval(group[0].SenderType)
		if iv == 0 {
			for _, w := range group {
				slot := now
				w.NotBefore = &slot
			}
			continue
		}
		first, err := tx.ReserveSendSlots(ctx, sender, now, iv, len(group))
		if err != nil {
			return nil, err
		}
		for k, w := range group {
			slot := first.Add(time.Duration(k) * iv)
			w.NotBefore = &slot
		}
	}
	var out []*store.OutboundWork
	for _, w := range paced {
		fields := map[string]any{"updated_at": now, "not_before": *w.NotBefore, "status": store.StatusQueued}
		if !w.NotBefore.After(now.Add(slotTolerance)) {
			fields["status"] = store.StatusSending
			out = append(out, w)
		} else {
			due := *w.NotBefore
			if exp := m.queuedSince(&w.Message).Add(m.cfg.Expiry); exp.Before(due) {
				due = exp
			}
			if err := tx.RequeueOutbound(ctx, []string{w.ID}, due); err != nil {
				return nil, err
			}
		}
		if _, err := tx.UpdateMessage(ctx, w.ID, []string{w.Status}, fields); err != nil {
			return nil, err
		}
		w.Status, w.UpdatedAt = fields["status"].(string), now
	}
	return out, nil
}

// queuedSince is when a message started waiting to be sent.
func (m *Messages) queuedSince(msg *store.Message) time.Time {
	if msg.SendAt != nil && msg.SendAt.After(msg.CreatedAt) {
		return *msg.SendAt
	}
	return msg.CreatedAt
}

// submit fetches a `sending` message's attachments and hands it to its carrier. It returns the
// carrier's id of the message when the carrier accepted it, nil when the message failed for good
// (recorded here), or an error when the submission should be tried again.
func (m *Messages) submit(ctx context.Context, msg *store.Message) (*string, error) {
	out, messenger, err := m.outbound(ctx, msg)
	if messenger == nil {
		return nil, err
	}
	return m.submitTo(ctx, msg, messenger, out)
}

// submitTo submits msg, as its carrier gets it (out), to that carrier, and returns as submit.
func (m *Messages) submitTo(ctx context.Context, msg *store.Message, messenger carriers.Messenger, out carriers.Outbound) (*string, error) {
	start := time.Now()
	sctx, span := m.submitSpan(ctx, msg)
	sub, err := messenger.Submit(sctx, out)
	return m.submitted(ctx, msg, span, start, sub, err)
}

// outbound is msg as its carrier gets it (its attachments fetched and stored) and that carrier.
// A nil carrier ends the submission with the error (nil when the message failed for good,
// recorded here) that submit returns.
func (m *Messages) outbound(ctx context.Context, msg *store.Message) (carriers.Outbound, carriers.Messenger, error) {
	out := carriers.Outbound{Reference: msg.ID, From: msg.FromNumber, To: msg.ToNumber, Encoding: msg.Encoding, Segments: msg.Segments}
	if msg.Body != nil {
		out.Body = *msg.Body
	}
	media, err := m.media(ctx, msg)
	var unreachable *errAttachment
	if errors.As(err, &unreachable) {
		m.cfg.Logger.Info("attachment unreachable", "message_id", msg.ID, "err", err)
		return out, nil, m.failSending(ctx, msg, carriers.FailureAttachmentUnreachable)
	}
	if err != nil {
		return out, nil, err
	}
	out.Media = media
	messenger, err := m.cfg.Carriers.Messenger(msg.Carrier)
	if err != nil {
		m.cfg.Logger.Error("no messaging carrier for a message", "message_id", msg.ID, "carrier", msg.Carrier, "err", err)
		return out, nil, m.failSending(ctx, msg, carriers.FailureUnknown)
	}
	return out, messenger, nil
}

// submitSpan starts the span of msg's submission while tracing is on (kit.Traced); none
// otherwise, as it would record nothing.
func (m *Messages) submitSpan(ctx context.Context, msg *store.Message) (context.Context, trace.Span) {
	if !kit.Traced() {
		return ctx, noop.Span{}
	}
	return tracer().Start(ctx, "carrier.submit", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("switchboard.carrier", msg.Carrier), attribute.String("switchboard.message_id", msg.ID)))
}

// submitted ends the submission of msg started at start with the carrier's answer (sub, err), as
// submit returns it.
func (m *Messages) submitted(ctx context.Context, msg *store.Message, span trace.Span, start time.Time, sub carriers.Submission, err error) (*string, error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	var refused *carriers.SubmitError
	switch {
	case errors.As(err, &refused) && refused.Permanent:
		m.metrics.observeSubmit(msg.Carrier, time.Since(start), submitRefused)
		m.cfg.Logger.Info("the carrier refused a message", "message_id", msg.ID, "carrier", msg.Carrier, "reason", refused.Reason)
		return nil, m.failSending(ctx, msg, refused.Reason)
	case err != nil:
		m.metrics.observeSubmit(msg.Carrier, time.Since(start), submitTemporary)
		m.cfg.Logger.Warn("carrier submission failed; it is tried again", "message_id", msg.ID, "carrier", msg.Carrier, "err", err)
		if !m.now().Before(m.queuedSince(msg).Add(m.cfg.Expiry)) {
			return nil, m.failSending(ctx, msg, carriers.FailureExpired)
		}
		return nil, fmt.Errorf("submit message %s: %w", msg.ID, err)
	}
	m.metrics.observeSubmit(msg.Carrier, time.Since(start), "")
	return &sub.CarrierID, nil
}

// batchSubmitter is a carrier that takes many messages in one call (the simulated carrier, which
// stores them in one transaction), each answered as Submit would be, at the same index.
type batchSubmitter interface {
	SubmitBatch(ctx context.Context, ms []carriers.Outbound) ([]carriers.Submission, []error)
}

// submitWave submits together the messages works[i] for i in wave (no two of one conversation),
// each carrier's in one call, and sets their results as submit returns them.
func (m *Messages) submitWave(ctx context.Context, works []*store.OutboundWork, wave []int, results []submitResult) {
	type pending struct {
		i     int
		ctx   context.Context
		span  trace.Span
		start time.Time
	}
	byCarrier := map[batchSubmitter][]pending{}
	outs := map[batchSubmitter][]carriers.Outbound{}
	var order []batchSubmitter
	for _, i := range wave {
		msg := &works[i].Message
		sctx := kit.WithTraceparent(ctx, works[i].Traceparent) // the trace of the request that sent it
		out, messenger, err := m.outbound(sctx, msg)
		if messenger == nil {
			results[i] = submitResult{err: err}
			continue
		}
		b, ok := messenger.(batchSubmitter)
		if !ok {
			results[i].carrierID, results[i].err = m.submitTo(sctx, msg, messenger, out)
			continue
		}
		if byCarrier[b] == nil {
			order = append(order, b)
		}
		_, span := m.submitSpan(sctx, msg)
		byCarrier[b] = append(byCarrier[b], pending{i: i, ctx: sctx, span: span, start: time.Now()})
		outs[b] = append(outs[b], out)
	}
	for _, b := range order {
		subs, errs := b.SubmitBatch(ctx, outs[b])
		for k, p := range byCarrier[b] {
			results[p.i].carrierID, results[p.i].err = m.submitted(p.ctx, &works[p.i].Message, p.span, p.start, subs[k], errs[k])
		}
	}
}

// submitResult is the outcome of one submission of a batch, as submit returns it.
type submitResult struct {
	carrierID *string
	err       error
}

// media fetches (once) and stores a message's attachments, and returns them as the carrier gets
// them: signed URLs of the stored copies.
func (m *Messages) media(ctx context.Context, msg *store.Message) ([]carriers.Media, error) {
	if msg.Type != TypeMMS {
		return nil, nil
	}
	atts, err := m.cfg.Store.MessageAttachments(ctx, msg.ID)
	if err != nil || len(atts) == 0 {
		return nil, err
	}
	out := make([]carriers.Media, 0, len(atts))
	for _, a := range atts {
		ct := ""
		if a.ContentType != nil {
			ct = *a.ContentType
		}
		if a.FetchedAt == nil {
			var data []byte
			if ct, data, err = m.fetchAttachment(ctx, a.URL, nil); err != nil {
				return nil, err
			}
			if err := m.cfg.Store.SaveAttachmentFile(ctx, a.ID, AttachmentType(ct), ct, data, m.now()); err != nil {
				return nil, err
			}
		}
		u, err := m.FileURL(ctx, a.ID, CarrierFileURLTTL)
		if err != nil {
			return nil, err
		}
		out = append(out, carriers.Media{URL: u, ContentType: ct})
	}
	return out, nil
}

// failSending fails a message that is `sending`; it leaves the outbound queue.
func (m *Messages) failSending(ctx context.Context, msg *store.Message, reason string) error {
	return m.cfg.Store.TxAsync(context.WithoutCancel(ctx), func(tx *store.Store) error {
		locked, err := tx.LockMessage(ctx, msg.ID)
		if err != nil {
			return err
		}
		if locked.Status != store.StatusSending {
			return tx.DropOutbound(ctx, []string{msg.ID})
		}
		return m.fail(ctx, tx, locked, reason, m.now(), nil)
	})
}

// fail records a message's failure and its message.failed event inside tx, and takes it out of the
// outbound queue. Numbers that failed as invalid or unreachable are blocked for the account.
func (m *Messages) fail(ctx context.Context, tx *store.Store, msg *store.Message, reason string, at time.Time, v *store.MessageView) error {
	if !knownFailure[reason] {
		reason = carriers.FailureUnknown
	}
	if err := tx.DropOutbound(ctx, []string{msg.ID}); err != nil {
		return err
	}
	ok, err := tx.UpdateMessage(ctx, msg.ID, []string{msg.Status},
		map[string]any{"status": store.StatusFailed, "failed_at": at, "failure_reason": reason, "updated_at": at})
	if err != nil || !ok {
		return err
	}
	msg.Status, msg.FailedAt, msg.FailureReason, msg.UpdatedAt = store.StatusFailed, &at, &reason, at
	if blocksRecipient(reason) {
		if err := tx.BlockNumber(ctx, store.BlockedNumber{AccountID: msg.AccountID, PhoneNumber: msg.ToNumber,
			Reason: reason, BlockedAt: at, RetryAfter: at.Add(BlockRetryAfter)}); err != nil {
			return err
		}
	}
	if v != nil && v.Contact.ID != "" && msg.Type != TypeSMS {
		v = nil // an MMS's event reads its attachments
	}
	return m.messageEvent(ctx, tx, webhooks.EventMessageFailed, msg, v)
}

// blockReasons are the failure reasons that block the recipient for the account (decisions §5).
var blockReasons = []string{carriers.FailureInvalidMobileNumber, carriers.FailureUnreachableCarrier}

func blocksRecipient(reason string) bool { return slices.Contains(blockReasons, reason) }

var knownFailure = map[string]bool{
	carriers.FailureInvalidMobileNumber: true, carriers.FailureUnreachableCarrier: true, carriers.FailureLandline: true,
	carriers.FailureCarrierFiltered: true, carriers.FailureOptedOutAtCarrier: true, carriers.FailureExpired: true,
	carriers.FailureAttachmentUnreachable: true, carriers.FailureUnknown: true,
}

// dispatchArgs is the dispatch job of one message, as releases before the outbound queue enqueued
// it with every message; the worker below puts such a message into the queue.
type dispatchArgs struct {
	MessageID string `json:"message_id"`
}

// Kind names the job.
func (dispatchArgs) Kind() string { return "dispatch_message" }

// MessagesQueue is the job queue of the dispatch jobs of earlier releases.
const MessagesQueue = "messages"

// InsertOpts puts dispatch jobs in their own queue.
func (dispatchArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: MessagesQueue} }

type dispatchWorker struct {
	river.WorkerDefaults[dispatchArgs]
	m *Messages
}

// Work puts the message into the outbound queue, due at once, when it still has to be sent.
func (w *dispatchWorker) Work(ctx context.Context, j *river.Job[dispatchArgs]) error {
	return w.m.cfg.Store.RequeueMessage(ctx, j.Args.MessageID, w.m.now())
}
