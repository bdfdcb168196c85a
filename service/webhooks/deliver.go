package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/store"
)

// Webhook deliverer tuning.
const (
	// webhookClaimBatch is the most deliveries of one claim.
	webhookClaimBatch = 200
	// webhookInFlight is the most attempts one instance has in flight: the bound on the
	// goroutines that wait on endpoints (each endpoint has its own, smaller bound: endpointGuard).
	webhookInFlight = 600
	// webhookPoll is how often an idle deliverer looks for due deliveries (wake-ups make it look
	// at once when this or another instance makes one).
	webhookPoll = 100 * time.Millisecond
	// webhookLeaseMargin is how much longer than the attempt's timeout a claim holds a delivery.
	webhookLeaseMargin = 5 * time.Second
	// webhookJoinWait is the most a claim waits, while attempts are in flight, for a success to
	// record with it.
	webhookJoinWait = 5 * time.Millisecond
	// webhookGather is how long, from the first success waiting, a claim waits for more to record
	// with it (up to webhookRecordBatch), while attempts are in flight.
	webhookGather = 15 * time.Millisecond
	// webhookRecordBatch is how many successes waiting make a claim go at once.
	webhookRecordBatch = 200
	// webhookRecordWait is how long, from the first success waiting, a claim waits for new
	// deliveries to claim with the successes once every attempt in flight has been answered.
	webhookRecordWait = 50 * time.Millisecond
	// webhookWorkerIdle is how long an attempt's worker waits for the next claimed delivery before
	// it ends.
	webhookWorkerIdle = 10 * time.Second
)

// StartDeliveries starts this instance's deliverer: it claims due deliveries in batches and
// attempts each, many at a time, within each endpoint's bound; Stop it with the returned kit.Runner.
func (w *Service) StartDeliveries(ctx context.Context) *kit.Runner {
	r, ctx, draining := kit.NewRunner(ctx, true)
	var attempts sync.WaitGroup
	if w.h1 != nil {
		w.h1.watch(ctx)
	}
	r.Go(func() {
		w.deliverLoop(ctx, draining, &attempts)
		attempts.Wait()
		if w.h1 != nil {
			w.h1.closeIdle()
		}
	})
	return r
}

// deliverLoop claims due deliveries while it has room for their attempts, and hands each to a
// worker (counted in wg), until draining closes or ctx ends. A worker makes attempts one after
// another and ends once it has waited webhookWorkerIdle for one, or when the loop ends: workers
// that live on keep the stacks their attempts grew (a goroutine per attempt grew a new one each
// time, deep in the HTTP client).
//
// The successes at healthy endpoints (nearly every attempt) are recorded by the loop's next claim,
// in its statement: one statement and one commit a round for both, the claim's and the outcomes'.
// A success keeps its slot until then (so that few answered attempts are ever unrecorded), but
// not its worker, which goes on to the next delivery at once: the loop frees the slots of the
// successes it recorded. Any other outcome takes the group commit (recordAll), as does a success
// whose claim failed or came after the loop stopped (settle).
//
// The claims run on a connection of the loop's own (store.Pinned), as the dispatch loops' do: the
// same statement over and over, which PostgreSQL plans again on every connection it ran on each
// time the webhook queue is vacuumed (about once a second at full load).
func (w *Service) deliverLoop(ctx context.Context, draining <-chan struct{}, wg *sync.WaitGroup) {
	wake := w.cfg.Store.Subscribe(store.WakeWebhooks)
	st, release := w.cfg.Store.Pinned()
	defer release()
	d := &deliverer{w: w, wg: wg, slots: make(chan struct{}, webhookInFlight), freed: make(chan struct{}, 1),
		jobs: make(chan *store.DeliveryWork), successes: successes{ready: make(chan struct{}, 1)}}
	defer func() {
		close(d.jobs)
		d.settle(ctx, d.successes.stop(), errDelivererStopped)
	}()
	backoff := webhookPoll
	for !kit.Stopping(ctx, draining) {
		room := cap(d.slots) - len(d.slots)
		if room > 0 && room < cap(d.slots) {
			d.gather(ctx, draining, wake)
		}
		b := d.successes.take()
		if room == 0 && b == nil {
			kit.Sleep(ctx, draining, d.successes.ready, d.freed, time.Second)
			continue
		}
		limit := min(room, webhookClaimBatch)
		claimCtx := ctx
		if b != nil {
			// The outcomes are recorded even when this instance is stopping.
			claimCtx = context.WithoutCancel(ctx)
		}
		works, err := st.RecordAndClaimDeliveries(claimCtx, b.outcomes(), w.now(), limit, w.cfg.Timeout+webhookLeaseMargin)
		d.settle(ctx, b, err)
		if err != nil {
			backoff = kit.ClaimFailed(ctx, draining, w.cfg.Logger, "claim webhook deliveries", err, backoff)
			continue
		}
		backoff = webhookPoll
		for i := range works {
			d.slots <- struct{}{}
			select {
			case d.jobs <- &works[i]: // an idle worker takes it
			default:
				wg.Add(1)
				go d.worker(ctx, &works[i])
			}
		}
		if limit > 0 && len(works) == limit {
			continue
		}
		kit.Sleep(ctx, draining, wake, d.successes.ready, webhookPoll)
	}
}

// gather waits, while attempts are in flight, for their successes to make one batch for the next
// claim to record, rather than each few take a statement and a commit of their own: until
// webhookRecordBatch wait, or webhookGather has passed since the first of them came, or
// webhookJoinWait has passed with none. Each statement and its commit cost PostgreSQL about as
// much as 30 successes recorded in it. Once every attempt in flight has been answered with a
// success, no more can come before the next claim: then the successes wait for new deliveries
// (a wake-up), up to webhookRecordWait from the first, so that the claim of those deliveries
// records them, where the successes' own statement claimed nothing new and the next wake-up's
// claim recorded nothing (two statements a batch of deliveries at a steady load, one now).
func (d *deliverer) gather(ctx context.Context, draining, wake <-chan struct{}) {
	deadline := time.Now().Add(webhookJoinWait)
	for !kit.Stopping(ctx, draining) {
		n, since := d.successes.pending()
		if n >= webhookRecordBatch {
			return
		}
		if n > 0 {
			deadline = since.Add(webhookGather)
			// Only the loop takes slots and a success holds its slot until recorded, so with as
			// many successes waiting as slots taken, nothing else is in flight.
			if n == len(d.slots) {
				if wait := time.Until(since.Add(webhookRecordWait)); wait > 0 {
					kit.Sleep(ctx, draining, wake, nil, wait)
				}
				return
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		kit.Sleep(ctx, draining, d.successes.ready, nil, wait)
	}
}

// errDelivererStopped is the outcome of successes left waiting when the deliverer stopped: they
// are recorded through the group commit instead.
var errDelivererStopped = errors.New("webhooks: the deliverer stopped")

// deliverer is what a deliverLoop shares with its workers.
type deliverer struct {
	w  *Service
	wg *sync.WaitGroup
	// slots holds a token for each attempt in flight; freed is signalled when one ends.
	slots chan struct{}
	freed chan struct{}
	// jobs hands claimed deliveries to idle workers.
	jobs chan *store.DeliveryWork
	// successes wait for the next claim, which records them.
	successes successes
}

// worker attempts work, then each delivery it receives from jobs, freeing its slot after each
// (a success waiting for the next claim keeps it: settle frees it), until jobs closes or none came
// for webhookWorkerIdle.
func (d *deliverer) worker(ctx context.Context, work *store.DeliveryWork) {
	defer d.wg.Done()
	idle := time.NewTimer(webhookWorkerIdle)
	defer idle.Stop()
	for ok := true; ok; {
		if !d.w.deliver(ctx, work, &d.successes) {
			d.free(1)
		}
		idle.Reset(webhookWorkerIdle)
		select {
		case work, ok = <-d.jobs:
		case <-idle.C:
			return
		}
	}
}

// free frees n slots of attempts that have ended, and tells the loop.
func (d *deliverer) free(n int) {
	for range n {
		<-d.slots
	}
	select {
	case d.freed <- struct{}{}:
	default:
	}
}

// settle ends a batch of successes that a claim recorded (err nil) by freeing their slots; when it
// could not record them (err), each is recorded through the group commit, as any other outcome,
// before its slot is freed. A nil batch is left alone.
func (d *deliverer) settle(ctx context.Context, b *successBatch, err error) {
	if b == nil {
		return
	}
	if err == nil {
		d.free(len(b.recs))
		return
	}
	for _, r := range b.recs {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.w.record(ctx, r)
			d.free(1)
		}()
	}
}

// successes are the successful attempts waiting for the deliverer's next claim to record them.
type successes struct {
	mu      sync.Mutex
	batch   *successBatch
	stopped bool
	// ready is signalled when a batch gets its first success, and when it reaches
	// webhookRecordBatch.
	ready chan struct{}
}

// successBatch is the successes one claim records: their outcomes, and the attempts as the group
// commit records them should the claim fail.
type successBatch struct {
	outs  []store.DeliveryOutcome
	recs  []attemptRecord
	since time.Time // when the first came
}

// add queues a success (its outcome o, and r to record it otherwise) with its slot; false once
// the deliverer has stopped.
func (s *successes) add(o store.DeliveryOutcome, r attemptRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	if s.batch == nil {
		s.batch = &successBatch{since: time.Now()}
	}
	s.batch.outs = append(s.batch.outs, o)
	s.batch.recs = append(s.batch.recs, r)
	if n := len(s.batch.outs); n == 1 || n == webhookRecordBatch {
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
	return true
}

// pending is how many successes wait, and since when the first has.
func (s *successes) pending() (int, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.batch == nil {
		return 0, time.Time{}
	}
	return len(s.batch.outs), s.batch.since
}

// take returns the batch of the successes waiting (nil when none is) and starts the next; ready
// is signalled again only by a success added after it.
func (s *successes) take() *successBatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.batch
	s.batch = nil
	select {
	case <-s.ready:
	default:
	}
	return b
}

// stop is take, after which add takes no more successes.
func (s *successes) stop() *successBatch {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	return s.take()
}

// outcomes are the batch's outcomes; none for a nil batch.
func (b *successBatch) outcomes() []store.DeliveryOutcome {
	if b == nil {
		return nil
	}
	return b.outs
}

// deliver makes one attempt of a claimed delivery and records it: a success at a healthy endpoint
// with the deliverer's next claim (succ), to which it then hands its slot (it returns true), any
// other outcome through the group commit.
func (w *Service) deliver(ctx context.Context, work *store.DeliveryWork, succ *successes) bool {
	attempt := work.Delivery.Attempts + 1
	if !work.Endpoint.Enabled {
		msg := "endpoint disabled"
		err := w.cfg.Store.RecordDeliveries(context.WithoutCancel(ctx), []store.DeliveryOutcome{{ID: work.Delivery.ID,
			Attempts: work.Delivery.Attempts, Error: &msg, State: store.DeliveryFailed, QueueRow: work.QueueRow}}, w.now())
		if err == nil {
			w.metrics.failed.Inc()
		}
		return false
	}
	p, verdict, until := w.guard.enter(ctx, work.Endpoint.ID)
	switch verdict {
	case breakerOn:
		// The endpoint left its last attempts unanswered: fail this one without waiting on it.
		w.metrics.attempts.WithLabelValues(attemptBreakerOpen).Inc()
		next := "a probe to it is under way"
		if now := w.cfg.Now(); until.After(now) {
			next = "this instance sends to it again after " + until.UTC().Format(time.RFC3339)
		}
		failure := fmt.Sprintf("not sent: the endpoint left %d attempts in a row unanswered within %s; %s",
			w.cfg.BreakerThreshold, w.cfg.Timeout, next)
		w.record(ctx, attemptRecord{work: work, attempt: attempt, failure: failure})
		return false
	case sendLater:
		// The endpoint is slow and has as many attempts in flight as it may (or this instance is
		// stopping while the attempt waited for a slot): the delivery goes back to the queue,
		// not counted as an attempt.
		due := w.now()
		if ctx.Err() == nil {
			w.metrics.deferred.Inc()
			due = due.Add(webhookDeferral + time.Duration(mrand.Int64N(int64(webhookDeferral))))
		}
		if err := w.cfg.Store.DeferDeliveries(context.WithoutCancel(ctx), []string{work.Delivery.ID}, due); err != nil {
			w.cfg.Logger.Warn("defer a webhook delivery", "delivery", work.Delivery.ID, "err", err)
		}
		return false
	}
	began := time.Now()
	status, failure, outcome := w.attempt(ctx, work)
	if ctx.Err() != nil {
		// This instance is stopping; the attempt is not the endpoint's failure. The delivery is
		// due again at once, here or on another instance, with the same attempt number.
		p.leave(abandoned)
		if err := w.cfg.Store.DeferDeliveries(context.WithoutCancel(ctx), []string{work.Delivery.ID}, w.now()); err != nil {
			w.cfg.Logger.Warn("release a webhook delivery", "delivery", work.Delivery.ID, "err", err)
		}
		return false
	}
	seen := answered
	if outcome == attemptTimeout {
		seen = unanswered
	}
	p.leave(seen)
	w.metrics.observeAttempt(outcome, time.Since(began), work.Event.CreatedAt)
	answered := w.now()
	r := attemptRecord{work: work, attempt: attempt, status: status, failure: failure, answered: answered}
	if failure == "" && work.Endpoint.FailingSince == nil {
		// recordAll's simple case, recorded by the next claim.
		if succ.add(store.DeliveryOutcome{ID: work.Delivery.ID, Attempts: attempt, Status: status,
			State: store.DeliverySucceeded, QueueRow: work.QueueRow, AnsweredAt: answered}, r) {
			return true
		}
	}
	w.record(ctx, r)
	return false
}

// record records an attempt through the group commit; an error leaves the delivery to be attempted
// again once its claim's lease ends.
func (w *Service) record(ctx context.Context, r attemptRecord) {
	if _, err := w.records.Do(context.WithoutCancel(ctx), r); err != nil {
		w.cfg.Logger.Warn("record a webhook attempt; it is attempted again", "delivery", r.work.Delivery.ID, "err", err)
	}
}

// webhookDeferral is the least time an attempt waits in the queue when its slow endpoint has no
// slot free; it waits up to twice that, spread so deferred attempts do not return all at once.
const webhookDeferral = 10 * time.Second

// attempt POSTs the event once; it returns the HTTP status (0 without an answer), the outcome
// (attemptSucceeded, …) and, when the attempt failed, why.
func (w *Service) attempt(ctx context.Context, work *store.DeliveryWork) (status int, failure, outcome string) {
	// A span per attempt, in the trace of the work that made the event (the request that sent
	// a message, for message.*), whose traceparent the endpoint also gets.
	// Its attributes are made only when it is recorded (tracing is off by default). While the
	// process traces nothing (kit.Traced), no span is started: the global provider's would
	// record nothing, and the endpoint gets the same traceparent, the event's.
	ctx = kit.WithTraceparent(ctx, work.Event.Traceparent)
	var span trace.Span = noop.Span{}
	if kit.Traced() {
		ctx, span = tracer().Start(ctx, "webhook.attempt", clientSpan)
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.String("switchboard.event_id", work.Event.ID),
			attribute.String("switchboard.event_type", work.Event.Type), attribute.String("switchboard.endpoint_id", work.Endpoint.ID),
			attribute.String("switchboard.delivery_id", work.Delivery.ID))
	}
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("switchboard.outcome", outcome))
			if failure != "" {
				span.SetStatus(codes.Error, failure)
			}
		}
		span.End()
	}()
	body, err := Body(&work.Event)
	if err != nil {
		return 0, err.Error(), attemptError
	}
	now := w.cfg.Now()
	secrets := []string{work.Endpoint.Secret}
	if p, until := work.Endpoint.PreviousSecret, work.Endpoint.PreviousSecretUntil; p != nil && until != nil && now.Before(*until) {
		secrets = append(secrets, *p)
	}
	sig, svc, err := Sign(secrets, work.Event.ID, now, body)
	if err != nil {
		return 0, err.Error(), attemptError
	}
	ts := strconv.FormatInt(now.Unix(), 10) // the Webhook-Timestamp header, the time both signatures sign
	if w.h1 != nil {
		if t := w.h1.target(work.Endpoint.URL); t != nil {
			r := h1Request{body: body}
			setAttemptHeaders(ctx, &r, work.Event.ID, ts, sig, svc)
			if !r.bad {
				status, snippet, err := w.h1.post(ctx, t, time.Now().Add(w.cfg.Timeout), &r)
				if err != nil {
					outcome, failure := describeSendError(err, w.cfg.Timeout)
					return 0, failure, outcome
				}
				return judgeAnswer(status, snippet)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, work.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error(), attemptError
	}
	req.Header.Set("User-Agent", UserAgent) // h1Request writes its own
	setAttemptHeaders(ctx, req.Header, work.Event.ID, ts, sig, svc)
	resp, err := w.client.Do(req)
	if err != nil {
		outcome, failure := describeSendError(err, w.cfg.Timeout)
		return 0, failure, outcome
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	return judgeAnswer(resp.StatusCode, snippet)
}

// headerSetter is where an attempt's headers go: net/http's request header, or h1Request.
type headerSetter interface{ Set(key, value string) }

// setAttemptHeaders sets an attempt's headers besides User-Agent: the body's type, the Standard
// Webhooks headers (id, timestamp, signature, and the svc- alias of the signature) and the trace's.
func setAttemptHeaders(ctx context.Context, h headerSetter, id, ts, sig, svc string) {
	h.Set("Content-Type", "application/json")
	h.Set("Webhook-Id", id)
	h.Set("Webhook-Timestamp", ts)
	h.Set("Webhook-Signature", sig)
	h.Set("Svc-Signature", svc)
	kit.InjectTraceparent(ctx, h)
}

// judgeAnswer is the outcome of an attempt the endpoint answered with status, and the failure's
// message (with the start of the answer's body, snippet) when it is not a 2xx.
func judgeAnswer(status int, snippet []byte) (int, string, string) {
	if status >= 200 && status <= 299 {
		return status, "", attemptSucceeded
	}
	msg := "HTTP " + strconv.Itoa(status)
	if status >= 300 && status <= 399 {
		msg += " (redirects are not followed)"
	}
	if s := strings.TrimSpace(string(snippet)); s != "" {
		msg += ": " + s
	}
	return status, msg, attemptHTTPStatus
}

// clientSpan is the option of every attempt's span, made once.
var clientSpan = trace.WithSpanKind(trace.SpanKindClient)

// describeSendError classifies a request that got no answer and says why, for the delivery.
func describeSendError(err error, timeout time.Duration) (outcome, failure string) {
	var refused *RefusedTargetError
	var ne net.Error
	switch {
	case errors.As(err, &refused):
		return attemptRefusedTarget, refused.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return attemptTimeout, fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return attemptRefused, "connection refused"
	}
	return attemptError, err.Error()
}

// attemptRecord is the outcome of one attempt: the HTTP status (0 without an answer) and, when
// it failed, why.
type attemptRecord struct {
	work    *store.DeliveryWork
	attempt int
	status  int
	failure string
	// answered is when the attempt ended (a success's delivered_at); zero: the record's time.
	answered time.Time
}

// recordAll writes the outcomes of concurrent attempts: a success ends its delivery and a failure
// schedules the next attempt (or fails the delivery) and may disable an endpoint that has failed
// for DisableAfter. When every attempt succeeded at a healthy endpoint (the common case) it is one
// statement; otherwise one transaction that also keeps the endpoints' failure streaks.
func (w *Service) recordAll(ctx context.Context, recs []attemptRecord) ([]struct{}, error) {
	now := w.now()
	outs := make([]store.DeliveryOutcome, len(recs))
	simple := true
	var failed, disabled int // counted once written
	for i, r := range recs {
		o := store.DeliveryOutcome{ID: r.work.Delivery.ID, Attempts: r.attempt, Status: r.status, State: store.DeliverySucceeded,
			QueueRow: r.work.QueueRow, AnsweredAt: r.answered}
		if r.failure != "" {
			simple = false
			failure := r.failure
			o.Error = &failure
			if next, retry := NextAttempt(w.cfg.RetrySchedule, r.attempt, now); retry {
				o.State, o.NextAttemptAt = store.DeliveryPending, &next
			} else {
				o.State = store.DeliveryFailed
				failed++
				w.cfg.Logger.Info("webhook delivery failed after its last attempt", "delivery", o.ID, "event", r.work.Event.ID,
					"endpoint", r.work.Endpoint.ID, "attempts", r.attempt, "error", r.failure)
			}
		} else if r.work.Endpoint.FailingSince != nil {
			simple = false
		}
		outs[i] = o
	}
	var err error
	if simple {
		err = w.cfg.Store.RecordDeliveries(ctx, outs, now)
	} else {
		err = w.cfg.Store.Tx(ctx, func(tx *store.Store) error {
			disabled = 0
			if err := tx.RecordDeliveries(ctx, outs, now); err != nil {
				return err
			}
			healthy, failing := map[string]bool{}, map[string]*store.WebhookEndpoint{}
			for _, r := range recs {
				if ep := &r.work.Endpoint; r.failure != "" {
					failing[ep.ID] = ep
				} else if ep.FailingSince != nil {
					healthy[ep.ID] = true
				}
			}
			for id := range healthy {
				if failing[id] == nil {
					if err := tx.MarkEndpointHealthy(ctx, id); err != nil {
						return err
					}
				}
			}
			reason := fmt.Sprintf("failing continuously for %s", w.cfg.DisableAfter)
			for _, ep := range failing {
				off, err := tx.MarkEndpointFailing(ctx, ep.ID, now, now.Add(-w.cfg.DisableAfter), reason)
				if err != nil {
					return err
				}
				if off {
					disabled++
					w.cfg.Logger.Warn("disabled a webhook endpoint that kept failing", "endpoint", ep.ID,
						"project", ep.ProjectID, "url", RedactURL(ep.URL), "for", w.cfg.DisableAfter)
				}
			}
			return nil
		})
	}
	if err == nil {
		w.metrics.failed.Add(float64(failed))
		w.metrics.disabled.Add(float64(disabled))
		for _, r := range recs {
			if r.failure != "" {
				w.cfg.Logger.Info("webhook attempt failed", "delivery", r.work.Delivery.ID, "event", r.work.Event.ID,
					"endpoint", r.work.Endpoint.ID, "project", r.work.Endpoint.ProjectID, "attempt", r.attempt,
					"status", r.status, "error", r.failure)
			}
		}
	}
	return make([]struct{}, len(recs)), err
}

// RedactURL hides what a URL may carry as credentials, for logs and listings: the userinfo's
// password and every query value (https://user:xxxxx@host/path?token=xxxxx).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// tracer makes the spans of webhook attempts with the process's current provider, a no-op unless
// tracing is on. It is looked up at each use: a tracer kept from before the provider was set would
// stay with the first one ever set.
func tracer() trace.Tracer { return otel.Tracer("github.com/switchboard/switchboard/service/webhooks") }
