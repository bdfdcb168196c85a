package service

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/store"
)

// WebhookEventTypes are the event types endpoints can subscribe to (decisions §6).
var WebhookEventTypes = []string{
	EventMessageSent, EventMessageDelivered, EventMessageFailed, EventMessageReceived,
	EventConversationCreated, EventContactOptedIn, EventContactOptedOut,
	EventCampaignApproved, EventCampaignDeactivated, EventPhoneNumberAttachedCampaign, EventLinkFollowed,
	"voicemail.received", "call.ended", "recording.completed",
}

// WebhooksQueue is the job queue of delivery attempts.
const WebhooksQueue = store.QueueWebhooks

// Webhook delivery defaults (decisions §6).
const (
	// DefaultWebhookTimeout is how long an endpoint has to answer 2xx.
	DefaultWebhookTimeout = 15 * time.Second
	// DefaultWebhookDisableAfter is how long an endpoint may fail without a success in between
	// before it is disabled.
	DefaultWebhookDisableAfter = 5 * 24 * time.Hour
	// WebhookSecretGrace is how long a rotated-out secret keeps signing beside the new one.
	WebhookSecretGrace = 24 * time.Hour
	// WebhookUserAgent is the User-Agent of every delivery.
	WebhookUserAgent = "Switchboard-Webhooks/1.0"
)

// DefaultWebhookRetrySchedule returns the waits before the retries of a failed delivery: after
// the first attempt fails the second comes 5 s later, and so on; when the last retry fails too
// the delivery is failed (8 attempts in all, over about 27.6 hours).
func DefaultWebhookRetrySchedule() []time.Duration {
	return []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 10 * time.Hour}
}

// WebhooksConfig wires the Webhooks service.
type WebhooksConfig struct {
	// Store is required.
	Store *store.Store
	// AllowPrivate lets endpoints resolve to private, loopback, link-local and unique-local
	// addresses (local development and tests). Defaults to false: such targets are refused at
	// connect time, on the resolved address.
	AllowPrivate bool
	// Timeout is how long an endpoint has to answer. Defaults to DefaultWebhookTimeout (15 s).
	Timeout time.Duration
	// RetrySchedule is the wait before each retry. Defaults to DefaultWebhookRetrySchedule().
	RetrySchedule []time.Duration
	// DisableAfter is how long an endpoint may fail continuously before it is disabled. Defaults
	// to DefaultWebhookDisableAfter (5 days).
	DisableAfter time.Duration
	// EndpointConcurrency is how many attempts this instance sends at once to an endpoint that
	// answers quickly; more attempts wait a moment for a slot. Defaults to
	// DefaultWebhookEndpointConcurrency (100).
	EndpointConcurrency int
	// SlowEndpointConcurrency is how many attempts this instance sends at once to a slow endpoint
	// (its attempts take a second or more); more attempts go back to the queue for a few seconds,
	// without counting as attempts, so a slow endpoint holds few workers. Defaults to
	// DefaultWebhookSlowEndpointConcurrency (25).
	SlowEndpointConcurrency int
	// BreakerThreshold is how many attempts in a row an endpoint may leave unanswered within
	// Timeout before this instance stops sending to it for BreakerCooldown: meanwhile its
	// attempts fail at once, without a request, and follow the retry schedule like any failure;
	// then one attempt goes through as a probe, and any answer resumes deliveries. Defaults to
	// DefaultWebhookBreakerThreshold (5).
	BreakerThreshold int
	// BreakerCooldown defaults to DefaultWebhookBreakerCooldown (30 s); it runs on Now.
	BreakerCooldown time.Duration
	// Client sends the deliveries. Defaults to a client with the SSRF guard (unless AllowPrivate),
	// no proxy, no redirects and Timeout. A client given here is used as it is.
	Client *http.Client
	// Now is the clock: signing timestamps, retry times, the 5-day rule. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Webhooks delivers every event to the endpoints of its project, signed (Standard Webhooks,
// plus the deprecated svc-signature), at least once: InsertEvent creates, with the event, one
// pending delivery per subscribed endpoint, due at once; the deliverer (StartDeliveries) claims
// due deliveries in batches and attempts them, and each failed attempt makes the delivery due
// again per RetrySchedule in the statement that records it. Operators manage endpoints, inspect
// and replay deliveries.
type Webhooks struct {
	cfg    WebhooksConfig
	client *http.Client
	// records is the group commit of attempts: concurrent attempts record their outcomes in one
	// statement.
	records *store.Batcher[attemptRecord, struct{}]
	// guard keeps each endpoint's share of this instance's workers bounded.
	guard   *endpointGuard
	metrics *webhookMetrics
}

// NewWebhooks returns the Webhooks service.
func NewWebhooks(cfg WebhooksConfig) (*Webhooks, error) {
	if cfg.Store == nil {
		return nil, errors.New("service: NewWebhooks needs Store")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultWebhookTimeout
	}
	if cfg.RetrySchedule == nil {
		cfg.RetrySchedule = DefaultWebhookRetrySchedule()
	}
	if cfg.DisableAfter == 0 {
		cfg.DisableAfter = DefaultWebhookDisableAfter
	}
	if cfg.EndpointConcurrency <= 0 {
		cfg.EndpointConcurrency = DefaultWebhookEndpointConcurrency
	}
	if cfg.SlowEndpointConcurrency <= 0 {
		cfg.SlowEndpointConcurrency = DefaultWebhookSlowEndpointConcurrency
	}
	if cfg.BreakerThreshold <= 0 {
		cfg.BreakerThreshold = DefaultWebhookBreakerThreshold
	}
	if cfg.BreakerCooldown <= 0 {
		cfg.BreakerCooldown = DefaultWebhookBreakerCooldown
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Webhooks{cfg: cfg, client: cfg.Client, metrics: newWebhookMetrics(),
		guard: newEndpointGuard(cfg.EndpointConcurrency, cfg.SlowEndpointConcurrency, cfg.BreakerThreshold,
			cfg.BreakerCooldown, cfg.Now)}
	if w.client == nil {
		w.client = NewWebhookClient(cfg.AllowPrivate, cfg.Timeout)
	}
	w.records = store.NewBatcher(200, 3, w.recordAll)
	return w, nil
}

// Register adds the delivery worker, and the fan-out worker of the fan-out jobs that earlier
// releases enqueued with every event.
func (w *Webhooks) Register(workers *river.Workers) {
	river.AddWorker(workers, &fanoutWorker{w: w})
	river.AddWorker(workers, &deliveryWorker{w: w})
}

func (w *Webhooks) now() time.Time { return w.cfg.Now().UTC().Truncate(time.Microsecond) }

// NextWebhookAttempt is when the attempt after failed attempt number attempt (1-based) is due,
// given the schedule and the time of the failure; ok is false when no attempt remains.
func NextWebhookAttempt(schedule []time.Duration, attempt int, failedAt time.Time) (next time.Time, ok bool) {
	if attempt < 1 || attempt > len(schedule) {
		return time.Time{}, false
	}
	return failedAt.Add(schedule[attempt-1]), true
}

// --- Operator operations ---------------------------------------------------------------

// NewWebhookSecret returns a fresh signing secret: whsec_ and the base64 of 24 random bytes.
func NewWebhookSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("service: webhook secret: %w", err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// SetEndpoint configures the project's endpoint for rawURL: a new one with a fresh secret, or,
// when the project already has one with this URL, that one with its event types replaced and
// enabled again. events empty means every event type.
func (w *Webhooks) SetEndpoint(ctx context.Context, projectID, rawURL string, events []string) (*store.WebhookEndpoint, error) {
	if err := w.checkURL(rawURL); err != nil {
		return nil, err
	}
	for _, e := range events {
		if !slices.Contains(WebhookEventTypes, e) {
			return nil, Invalid("events", fmt.Sprintf("%q is not an event type (%s)", e, strings.Join(WebhookEventTypes, ", ")))
		}
	}
	if _, err := w.cfg.Store.GetProject(ctx, projectID); err != nil {
		return nil, err
	}
	now := w.now()
	joined := strings.Join(events, ",")
	existing, err := w.cfg.Store.FindWebhookEndpoint(ctx, projectID, rawURL)
	switch {
	case err == nil:
		if err := w.cfg.Store.UpdateWebhookEndpoint(ctx, existing.ID, map[string]any{"events": joined, "enabled": true,
			"disabled_reason": nil, "failing_since": nil, "updated_at": now}); err != nil {
			return nil, err
		}
		return w.cfg.Store.GetWebhookEndpoint(ctx, existing.ID)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	secret, err := NewWebhookSecret()
	if err != nil {
		return nil, err
	}
	e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: projectID, URL: rawURL,
		Events: joined, Secret: secret, Enabled: true, CreatedAt: now, UpdatedAt: now}
	if err := w.cfg.Store.CreateWebhookEndpoint(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// checkURL refuses what can never be delivered to: not absolute http(s), and, unless private
// targets are allowed, a literal private address or localhost (names are checked again, on the
// resolved address, at every connection).
func (w *Webhooks) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid("url", "is not an absolute http(s) URL")
	}
	if w.cfg.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err == nil && !PublicAddr(ip)) || strings.EqualFold(host, "localhost") {
		return Invalid("url", "points to a private, loopback or link-local address (set SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true to allow it)")
	}
	return nil
}

// Endpoints lists a project's endpoints, newest first.
func (w *Webhooks) Endpoints(ctx context.Context, projectID string) ([]store.WebhookEndpoint, error) {
	return w.cfg.Store.ListWebhookEndpoints(ctx, projectID, false)
}

// RotateSecret gives an endpoint a new secret; the old one keeps signing beside it for
// WebhookSecretGrace, so receivers can switch without losing a delivery.
func (w *Webhooks) RotateSecret(ctx context.Context, id string) (*store.WebhookEndpoint, error) {
	e, err := w.cfg.Store.GetWebhookEndpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	secret, err := NewWebhookSecret()
	if err != nil {
		return nil, err
	}
	now := w.now()
	if err := w.cfg.Store.UpdateWebhookEndpoint(ctx, id, map[string]any{"secret": secret, "previous_secret": e.Secret,
		"previous_secret_until": now.Add(WebhookSecretGrace), "updated_at": now}); err != nil {
		return nil, err
	}
	return w.cfg.Store.GetWebhookEndpoint(ctx, id)
}

// SetEnabled enables or disables an endpoint. A disabled endpoint gets no new deliveries, and
// its pending ones fail at their next attempt (they can be replayed once it is enabled).
// Enabling clears the failure streak.
func (w *Webhooks) SetEnabled(ctx context.Context, id string, enabled bool) (*store.WebhookEndpoint, error) {
	fields := map[string]any{"enabled": enabled, "updated_at": w.now(), "disabled_reason": "disabled by the operator"}
	if enabled {
		fields["disabled_reason"], fields["failing_since"] = nil, nil
	}
	if err := w.cfg.Store.UpdateWebhookEndpoint(ctx, id, fields); err != nil {
		return nil, err
	}
	return w.cfg.Store.GetWebhookEndpoint(ctx, id)
}

// Deliveries lists a project's deliveries, newest first; with failedOnly, only those whose last
// attempt failed: failed for good, or pending a retry after failures.
func (w *Webhooks) Deliveries(ctx context.Context, projectID string, failedOnly bool, limit int) ([]store.WebhookDelivery, error) {
	if limit <= 0 {
		limit = 50
	}
	if failedOnly {
		return w.cfg.Store.ListFailingWebhookDeliveries(ctx, projectID, limit)
	}
	return w.cfg.Store.ListWebhookDeliveries(ctx, projectID, "", limit)
}

// Replay delivers again: id is a delivery (whd_…: its event to its endpoint) or an event
// (evt_…: to every enabled endpoint of its project subscribed to its type). Each replay is a new
// delivery with a fresh retry schedule and the same webhook-id.
func (w *Webhooks) Replay(ctx context.Context, id string) ([]store.WebhookDelivery, error) {
	st := w.cfg.Store
	switch {
	case strings.HasPrefix(id, store.PrefixWebhookDelivery+"_"):
		d, err := st.GetWebhookDelivery(ctx, id)
		if err != nil {
			return nil, err
		}
		e, err := st.GetWebhookEndpoint(ctx, d.EndpointID)
		if err != nil {
			return nil, err
		}
		if !e.Enabled {
			return nil, Errorf(TypeConflict, "endpoint %s is disabled: enable it before replaying", e.ID)
		}
		return w.enqueue(ctx, []pair{{d.EventID, d.ProjectID, d.EventType, e.ID}})
	case strings.HasPrefix(id, store.PrefixEvent+"_"):
		ev, err := st.GetEvent(ctx, id)
		if err != nil {
			return nil, err
		}
		eps, err := st.ListWebhookEndpoints(ctx, ev.ProjectID, true)
		if err != nil {
			return nil, err
		}
		var ps []pair
		for _, e := range eps {
			if e.Subscribed(ev.Type) {
				ps = append(ps, pair{ev.ID, ev.ProjectID, ev.Type, e.ID})
			}
		}
		return w.enqueue(ctx, ps)
	}
	return nil, Invalid("id", "is neither a delivery (whd_…) nor an event (evt_…) id")
}

// ReplaySince replays every failed delivery of the project's events since a time, to its
// endpoint if that is enabled (once per event and endpoint).
func (w *Webhooks) ReplaySince(ctx context.Context, projectID string, since time.Time) ([]store.WebhookDelivery, error) {
	failed, err := w.cfg.Store.FailedDeliveriesSince(ctx, projectID, since)
	if err != nil {
		return nil, err
	}
	eps, err := w.cfg.Store.ListWebhookEndpoints(ctx, projectID, true)
	if err != nil {
		return nil, err
	}
	enabled := map[string]bool{}
	for _, e := range eps {
		enabled[e.ID] = true
	}
	seen := map[[2]string]bool{}
	var ps []pair
	for _, d := range failed {
		k := [2]string{d.EventID, d.EndpointID}
		if enabled[d.EndpointID] && !seen[k] {
			seen[k] = true
			ps = append(ps, pair{d.EventID, d.ProjectID, d.EventType, d.EndpointID})
		}
	}
	return w.enqueue(ctx, ps)
}

// pair is an event to deliver to an endpoint.
type pair struct{ eventID, projectID, eventType, endpointID string }

// enqueue creates a delivery per pair with its first attempt job, in one transaction.
func (w *Webhooks) enqueue(ctx context.Context, ps []pair) ([]store.WebhookDelivery, error) {
	if len(ps) == 0 {
		return []store.WebhookDelivery{}, nil
	}
	now := w.now()
	ds := make([]store.WebhookDelivery, len(ps))
	for i, p := range ps {
		ds[i] = store.PendingDelivery(p.projectID, p.endpointID, p.eventID, p.eventType, now)
	}
	err := w.cfg.Store.Tx(ctx, func(tx *store.Store) error { return tx.InsertWebhookDeliveries(ctx, ds) })
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// --- Fan-out ---------------------------------------------------------------------------

type fanoutWorker struct {
	river.WorkerDefaults[store.EventFanoutArgs]
	w *Webhooks
}

// Work turns an event into a delivery per enabled endpoint of its project subscribed to its type.
func (f *fanoutWorker) Work(ctx context.Context, job *river.Job[store.EventFanoutArgs]) error {
	a := job.Args
	eps, err := f.w.cfg.Store.ListWebhookEndpoints(ctx, a.ProjectID, true)
	if err != nil || len(eps) == 0 {
		return err
	}
	done := map[string]bool{}
	if job.Attempt > 1 {
		// A rerun (an error, or a crash after the commit): do not deliver twice to an endpoint
		// that already has this event's delivery.
		ds, err := f.w.cfg.Store.WebhookDeliveriesOfEvent(ctx, a.EventID)
		if err != nil {
			return err
		}
		for _, d := range ds {
			done[d.EndpointID] = true
		}
	}
	var ps []pair
	for _, e := range eps {
		if e.Subscribed(a.Type) && !done[e.ID] {
			ps = append(ps, pair{a.EventID, a.ProjectID, a.Type, e.ID})
		}
	}
	_, err = f.w.enqueue(ctx, ps)
	return err
}

// --- Delivery --------------------------------------------------------------------------

// DeliverWebhookArgs is the job of one delivery attempt as releases before the deliveries' own
// queue enqueued it (see store.DeliverWebhookArgs).
type DeliverWebhookArgs = store.DeliverWebhookArgs

// deliveryWorker works the attempt jobs of earlier releases: the delivery's row is its queue now
// (a pending delivery is due at its next_attempt_at), so the job only wakes the deliverers.
type deliveryWorker struct {
	river.WorkerDefaults[DeliverWebhookArgs]
	w *Webhooks
}

func (d *deliveryWorker) Work(context.Context, *river.Job[DeliverWebhookArgs]) error {
	d.w.cfg.Store.Wake(store.WakeWebhooks)
	return nil
}

// envelope is the body of every delivery: exactly the spec's four fields.
type envelope struct {
	AccountID string          `json:"account_id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// WebhookBody returns the JSON body delivered for an event: json.Marshal of its envelope, byte for
// byte. Every delivery builds one, so the common case (ids and a type of plain ASCII, a timestamp
// in years 0–9999, data without the characters json.Marshal escapes for HTML) is appended
// directly, without reflection; anything else goes through json.Marshal.
func WebhookBody(e *store.Event) ([]byte, error) {
	env := envelope{AccountID: e.AccountID, Type: e.Type, Timestamp: e.CreatedAt.UTC(), Data: json.RawMessage(e.Data)}
	if y := env.Timestamp.Year(); y < 0 || y > 9999 || !plainJSONString(env.AccountID) || !plainJSONString(env.Type) {
		return json.Marshal(env)
	}
	b := make([]byte, 0, len(e.Data)+len(env.AccountID)+len(env.Type)+80)
	b = append(b, `{"account_id":"`...)
	b = append(b, env.AccountID...)
	b = append(b, `","type":"`...)
	b = append(b, env.Type...)
	b = append(b, `","timestamp":"`...)
	b = env.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	data := len(b)
	buf := bytes.NewBuffer(b)
	// json.Marshal compacts a RawMessage and escapes <, >, &, U+2028 and U+2029 in it.
	if err := json.Compact(buf, env.Data); err != nil || htmlEscaped(buf.Bytes()[data:]) {
		return json.Marshal(env)
	}
	return append(buf.Bytes(), '}'), nil
}

// htmlEscaped reports whether json.Marshal would escape something in b for HTML: <, >, &, U+2028
// or U+2029 (E2 80 A8 and E2 80 A9 in UTF-8).
func htmlEscaped(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '<' || c == '>' || c == '&':
			return true
		case c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xa8:
			return true
		}
	}
	return false
}

// plainJSONString reports whether json.Marshal writes s as itself between quotes: printable
// ASCII without the characters it escapes (quote, backslash, and <, > and & for HTML).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

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
)

// StartDeliveries starts this instance's deliverer: it claims due deliveries in batches and
// attempts each, many at a time, within each endpoint's bound; Stop it with the returned Runner.
func (w *Webhooks) StartDeliveries(ctx context.Context) *Runner {
	ctx, cancel := context.WithCancelCause(ctx)
	draining := make(chan struct{})
	var once sync.Once
	r := &Runner{cancel: cancel, drain: func() { once.Do(func() { close(draining) }) }}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		w.deliverLoop(ctx, draining, &r.wg)
	}()
	return r
}

// deliverLoop claims due deliveries while it has room for their attempts, and starts an attempt
// for each (counted in wg), until draining closes or ctx ends.
func (w *Webhooks) deliverLoop(ctx context.Context, draining <-chan struct{}, wg *sync.WaitGroup) {
	wake := w.cfg.Store.Subscribe(store.WakeWebhooks)
	slots := make(chan struct{}, webhookInFlight)
	freed := make(chan struct{}, 1)
	backoff := webhookPoll
	for !stopping(ctx, draining) {
		room := cap(slots) - len(slots)
		if room == 0 {
			sleep(ctx, draining, nil, freed, time.Second)
			continue
		}
		works, err := w.cfg.Store.ClaimDeliveries(ctx, w.now(), min(room, webhookClaimBatch), w.cfg.Timeout+webhookLeaseMargin)
		if err != nil {
			backoff = claimFailed(ctx, draining, w.cfg.Logger, "claim webhook deliveries", err, backoff)
			continue
		}
		backoff = webhookPoll
		for i := range works {
			slots <- struct{}{}
			wg.Add(1)
			go func(work *store.DeliveryWork) {
				defer func() {
					<-slots
					select {
					case freed <- struct{}{}:
					default:
					}
					wg.Done()
				}()
				w.deliver(ctx, work)
			}(&works[i])
		}
		if len(works) == min(room, webhookClaimBatch) {
			continue
		}
		sleep(ctx, draining, wake, nil, webhookPoll)
	}
}

// deliver makes one attempt of a claimed delivery and records it.
func (w *Webhooks) deliver(ctx context.Context, work *store.DeliveryWork) {
	attempt := work.Delivery.Attempts + 1
	if !work.Endpoint.Enabled {
		msg := "endpoint disabled"
		err := w.cfg.Store.RecordDeliveries(context.WithoutCancel(ctx), []store.DeliveryOutcome{{ID: work.Delivery.ID,
			Attempts: work.Delivery.Attempts, Error: &msg, State: store.DeliveryFailed}}, w.now())
		if err == nil {
			w.metrics.failed.Inc()
		}
		return
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
		return
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
		return
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
		return
	}
	seen := answered
	if outcome == attemptTimeout {
		seen = unanswered
	}
	p.leave(seen)
	w.metrics.observeAttempt(outcome, time.Since(began), work.Event.CreatedAt)
	w.record(ctx, attemptRecord{work: work, attempt: attempt, status: status, failure: failure})
}

// record records an attempt through the group commit; an error leaves the delivery to be attempted
// again once its claim's lease ends.
func (w *Webhooks) record(ctx context.Context, r attemptRecord) {
	if _, err := w.records.Do(context.WithoutCancel(ctx), r); err != nil {
		w.cfg.Logger.Warn("record a webhook attempt; it is attempted again", "delivery", r.work.Delivery.ID, "err", err)
	}
}

// webhookDeferral is the least time an attempt waits in the queue when its slow endpoint has no
// slot free; it waits up to twice that, spread so deferred attempts do not return all at once.
const webhookDeferral = 10 * time.Second

// attempt POSTs the event once; it returns the HTTP status (0 without an answer), the outcome
// (attemptSucceeded, …) and, when the attempt failed, why.
func (w *Webhooks) attempt(ctx context.Context, work *store.DeliveryWork) (status int, failure, outcome string) {
	// A span per attempt, in the trace of the work that made the event (the request that sent
	// a message, for message.*), whose traceparent the endpoint also gets.
	ctx, span := tracer().Start(kit.WithTraceparent(ctx, work.Event.Traceparent), "webhook.attempt",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("switchboard.event_id", work.Event.ID),
			attribute.String("switchboard.event_type", work.Event.Type), attribute.String("switchboard.endpoint_id", work.Endpoint.ID),
			attribute.String("switchboard.delivery_id", work.Delivery.ID)))
	defer func() {
		span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("switchboard.outcome", outcome))
		if failure != "" {
			span.SetStatus(codes.Error, failure)
		}
		span.End()
	}()
	body, err := WebhookBody(&work.Event)
	if err != nil {
		return 0, err.Error(), attemptError
	}
	now := w.cfg.Now()
	secrets := []string{work.Endpoint.Secret}
	if p, until := work.Endpoint.PreviousSecret, work.Endpoint.PreviousSecretUntil; p != nil && until != nil && now.Before(*until) {
		secrets = append(secrets, *p)
	}
	sig, svc, err := SignWebhook(secrets, work.Event.ID, now, body)
	if err != nil {
		return 0, err.Error(), attemptError
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, work.Endpoint.URL, strings.NewReader(string(body)))
	if err != nil {
		return 0, err.Error(), attemptError
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", WebhookUserAgent)
	h.Set("webhook-id", work.Event.ID)
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	h.Set("svc-signature", svc)
	kit.InjectTraceparent(ctx, h)
	resp, err := w.client.Do(req)
	if err != nil {
		outcome, failure := describeSendError(err, w.cfg.Timeout)
		return 0, failure, outcome
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp.StatusCode, "", attemptSucceeded
	}
	msg := "HTTP " + strconv.Itoa(resp.StatusCode)
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		msg += " (redirects are not followed)"
	}
	if s := strings.TrimSpace(string(snippet)); s != "" {
		msg += ": " + s
	}
	return resp.StatusCode, msg, attemptHTTPStatus
}

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
}

// recordAll writes the outcomes of concurrent attempts: a success ends its delivery and a failure
// schedules the next attempt (or fails the delivery) and may disable an endpoint that has failed
// for DisableAfter. When every attempt succeeded at a healthy endpoint (the common case) it is one
// statement; otherwise one transaction that also keeps the endpoints' failure streaks.
func (w *Webhooks) recordAll(ctx context.Context, recs []attemptRecord) ([]struct{}, error) {
	now := w.now()
	outs := make([]store.DeliveryOutcome, len(recs))
	simple := true
	var failed, disabled int // counted once written
	for i, r := range recs {
		o := store.DeliveryOutcome{ID: r.work.Delivery.ID, Attempts: r.attempt, Status: r.status, State: store.DeliverySucceeded}
		if r.failure != "" {
			simple = false
			failure := r.failure
			o.Error = &failure
			if next, retry := NextWebhookAttempt(w.cfg.RetrySchedule, r.attempt, now); retry {
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

// --- Signing ---------------------------------------------------------------------------

// SignWebhook returns the webhook-signature header (Standard Webhooks: "v1,<base64 HMAC-SHA256
// of {id}.{unix ts}.{body}>" per secret, space-separated) and the deprecated svc-signature
// header ("t=<unix ts>,v1=<hex HMAC-SHA256 of {ts}.{body}>", one v1 per secret), signing with
// each whsec_ secret in order.
func SignWebhook(secrets []string, id string, at time.Time, body []byte) (webhookSignature, svcSignature string, err error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	std := make([]string, 0, len(secrets))
	svc := []string{"t=" + ts}
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			return "", "", fmt.Errorf("service: webhook secret is not whsec_ and base64: %w", err)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		std = append(std, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		m = hmac.New(sha256.New, key)
		m.Write([]byte(ts + "."))
		m.Write(body)
		svc = append(svc, "v1="+hex.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(std, " "), strings.Join(svc, ","), nil
}

// --- SSRF guard ------------------------------------------------------------------------

// RefusedTargetError is a connection the SSRF guard refused: the endpoint resolved to an address
// that is not public.
type RefusedTargetError struct{ Addr netip.Addr }

func (e *RefusedTargetError) Error() string {
	return fmt.Sprintf("refused: %s is a private, loopback, link-local or otherwise non-public address", e.Addr)
}

// nonPublic are the address ranges no webhook or attachment fetch may connect to: every entry of
// the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry) that is not globally reachable,
// plus multicast and the deprecated ranges that still route somewhere local. Where a registry
// block holds a few globally reachable anycast services (192.0.0.0/24, 2001::/23), the whole
// block is refused: no webhook lives on an anycast service address. Ranges that embed an IPv4
// address (6to4, Teredo, IPv4-mapped and -compatible, local-use NAT64) are refused whole, since
// a tunnel or translator on the way could deliver to the embedded address; the well-known NAT64
// prefix alone is judged by the IPv4 address it embeds (nat64), so that an IPv6-only host behind
// DNS64 still reaches public endpoints.
var nonPublic = []netip.Prefix{
	// IPv4 (RFC 6890 and its updates)
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network" (0.0.0.0/32: this host)
	netip.MustParsePrefix("10.0.0.0/8"),      // private use (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata (169.254.169.254)
	netip.MustParsePrefix("172.16.0.0/12"),   // private use (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (DS-Lite, dummy, NAT64 discovery, PCP/TURN anycast)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation, TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),  // private use (RFC 1918)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation, TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation, TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast (its own IANA registry)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255 limited broadcast
	// IPv6 (RFC 6890 and its updates)
	netip.MustParsePrefix("::/128"),          // unspecified
	netip.MustParsePrefix("::1/128"),         // loopback
	netip.MustParsePrefix("::/96"),           // deprecated IPv4-compatible addresses (RFC 4291)
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (RFC 2765)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use IPv4/IPv6 translation (RFC 8215)
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("100:0:0:1::/64"),  // dummy IPv6 prefix (RFC 9780)
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, which hold:
	netip.MustParsePrefix("2001::/32"),       //   Teredo, embeds IPv4 addresses (RFC 4380)
	netip.MustParsePrefix("2001:2::/48"),     //   benchmarking (RFC 5180)
	netip.MustParsePrefix("2001:10::/28"),    //   deprecated ORCHID (RFC 4843)
	netip.MustParsePrefix("2001:20::/28"),    //   ORCHIDv2, identifiers not locators (RFC 7343)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4, embeds IPv4 addresses (RFC 3056)
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),       // segment routing SIDs (RFC 9602)
	netip.MustParsePrefix("fc00::/7"),        // unique-local (fd00:ec2::254: AWS metadata)
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local (RFC 3879)
	netip.MustParsePrefix("ff00::/8"),        // multicast (its own IANA registry)
}

// nat64 is the well-known NAT64 prefix (RFC 6052), globally reachable in the registry: its
// addresses embed an IPv4 address, which is judged in turn.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// PublicAddr reports whether ip is a public unicast address a webhook may be sent to and an
// attachment fetched from: in none of the nonPublic ranges, and, for the well-known NAT64
// prefix, embedding a public IPv4 address.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return false
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		return PublicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// refuseNonPublic is a net.Dialer Control function: it runs for every connection with the
// address actually dialled, after name resolution, so DNS rebinding cannot get around it.
func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("service: webhook dial to %q: %w", address, err)
	}
	if !PublicAddr(ip) {
		return &RefusedTargetError{Addr: ip}
	}
	return nil
}

// NewWebhookClient returns the HTTP client deliveries use: no proxy (a proxy would dial on our
// behalf, past the guard), no redirects (a 3xx is a failed attempt), the given timeout per
// attempt, connections kept alive per endpoint, and, unless allowPrivate, the SSRF guard on
// every connection.
func NewWebhookClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refuseNonPublic
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   128,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
		},
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
