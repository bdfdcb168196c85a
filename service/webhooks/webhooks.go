package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/service/problem"
	"github.com/switchboard/switchboard/store"
)

// Queue is the job queue of the delivery attempts that earlier releases enqueued (see
// store.QueueWebhooks); the deliverer works the deliveries' own queue.
const Queue = store.QueueWebhooks

// Webhook delivery defaults (decisions §6).
const (
	// DefaultTimeout is how long an endpoint has to answer 2xx.
	DefaultTimeout = 15 * time.Second
	// DefaultDisableAfter is how long an endpoint may fail without a success in between
	// before it is disabled.
	DefaultDisableAfter = 5 * 24 * time.Hour
	// SecretGrace is how long a rotated-out secret keeps signing beside the new one.
	SecretGrace = 24 * time.Hour
	// UserAgent is the User-Agent of every delivery.
	UserAgent = "Switchboard-Webhooks/1.0"
)

// DefaultRetrySchedule returns the waits before the retries of a failed delivery: after
// the first attempt fails the second comes 5 s later, and so on; when the last retry fails too
// the delivery is failed (8 attempts in all, over about 27.6 hours).
func DefaultRetrySchedule() []time.Duration {
	return []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 10 * time.Hour}
}

// Config wires the webhooks Service.
type Config struct {
	// Store is required.
	Store *store.Store
	// AllowPrivate lets endpoints resolve to private, loopback, link-local and unique-local
	// addresses (local development and tests). Defaults to false: such targets are refused at
	// connect time, on the resolved address.
	AllowPrivate bool
	// Timeout is how long an endpoint has to answer. Defaults to DefaultTimeout (15 s).
	Timeout time.Duration
	// RetrySchedule is the wait before each retry. Defaults to DefaultRetrySchedule().
	RetrySchedule []time.Duration
	// DisableAfter is how long an endpoint may fail continuously before it is disabled. Defaults
	// to DefaultDisableAfter (5 days).
	DisableAfter time.Duration
	// EndpointConcurrency is how many attempts this instance sends at once to an endpoint that
	// answers quickly; more attempts wait a moment for a slot. Defaults to
	// DefaultEndpointConcurrency (100).
	EndpointConcurrency int
	// SlowEndpointConcurrency is how many attempts this instance sends at once to a slow endpoint
	// (its attempts take a second or more); more attempts go back to the queue for a few seconds,
	// without counting as attempts, so a slow endpoint holds few workers. Defaults to
	// DefaultSlowEndpointConcurrency (25).
	SlowEndpointConcurrency int
	// BreakerThreshold is how many attempts in a row an endpoint may leave unanswered within
	// Timeout before this instance stops sending to it for BreakerCooldown: meanwhile its
	// attempts fail at once, without a request, and follow the retry schedule like any failure;
	// then one attempt goes through as a probe, and any answer resumes deliveries. Defaults to
	// DefaultBreakerThreshold (5).
	BreakerThreshold int
	// BreakerCooldown defaults to DefaultBreakerCooldown (30 s); it runs on Now.
	BreakerCooldown time.Duration
	// Client sends the deliveries. Defaults to a client with the SSRF guard (unless AllowPrivate),
	// no proxy, no redirects and Timeout. A client given here is used as it is.
	Client *http.Client
	// Now is the clock: signing timestamps, retry times, the 5-day rule. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Service delivers every event to the endpoints of its project, signed (Standard Webhooks,
// plus the deprecated svc-signature), at least once: Publish creates, with the event, one
// pending delivery per subscribed endpoint, due at once; the deliverer (StartDeliveries) claims
// due deliveries in batches and attempts them, and each failed attempt makes the delivery due
// again per RetrySchedule in the statement that records it. Operators manage endpoints, inspect
// and replay deliveries.
type Service struct {
	cfg    Config
	client *http.Client
	// h1 sends to plain http:// endpoints when client is the default one (nil otherwise).
	h1 *h1Client
	// records is the group commit of attempts: concurrent attempts record their outcomes in one
	// statement (the successes at healthy endpoints go with the deliverer's next claim instead).
	records *store.Batcher[attemptRecord, struct{}]
	// guard keeps each endpoint's share of this instance's workers bounded.
	guard   *endpointGuard
	metrics *webhookMetrics
}

// New returns the webhooks Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("webhooks: New needs Store")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RetrySchedule == nil {
		cfg.RetrySchedule = DefaultRetrySchedule()
	}
	if cfg.DisableAfter == 0 {
		cfg.DisableAfter = DefaultDisableAfter
	}
	if cfg.EndpointConcurrency <= 0 {
		cfg.EndpointConcurrency = DefaultEndpointConcurrency
	}
	if cfg.SlowEndpointConcurrency <= 0 {
		cfg.SlowEndpointConcurrency = DefaultSlowEndpointConcurrency
	}
	if cfg.BreakerThreshold <= 0 {
		cfg.BreakerThreshold = DefaultBreakerThreshold
	}
	if cfg.BreakerCooldown <= 0 {
		cfg.BreakerCooldown = DefaultBreakerCooldown
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Service{cfg: cfg, client: cfg.Client, metrics: newWebhookMetrics(),
		guard: newEndpointGuard(cfg.EndpointConcurrency, cfg.SlowEndpointConcurrency, cfg.BreakerThreshold,
			cfg.BreakerCooldown, cfg.Now)}
	if w.client == nil {
		// Each attempt's context ends at Timeout (attempt) instead of the client's Timeout, which
		// costs a timer and a goroutine per request.
		w.client = NewClient(cfg.AllowPrivate, cfg.Timeout)
		w.client.Timeout = 0
		w.h1 = newH1Client(newDialer(cfg.AllowPrivate).DialContext)
	}
	w.records = store.NewBatcher(200, 3, w.recordAll)
	return w, nil
}

// Register adds the delivery worker, and the fan-out worker of the fan-out jobs that earlier
// releases enqueued with every event.
func (w *Service) Register(workers *river.Workers) {
	river.AddWorker(workers, &fanoutWorker{w: w})
	river.AddWorker(workers, &deliveryWorker{w: w})
}

func (w *Service) now() time.Time { return w.cfg.Now().UTC().Truncate(time.Microsecond) }

// NextAttempt is when the attempt after failed attempt number attempt (1-based) is due,
// given the schedule and the time of the failure; ok is false when no attempt remains.
func NextAttempt(schedule []time.Duration, attempt int, failedAt time.Time) (next time.Time, ok bool) {
	if attempt < 1 || attempt > len(schedule) {
		return time.Time{}, false
	}
	return failedAt.Add(schedule[attempt-1]), true
}

// --- Endpoints and replays ------------------------------------------------------------

// SetEndpoint configures the project's endpoint for rawURL: a new one with a fresh secret, or,
// when the project already has one with this URL, that one with its event types replaced and
// enabled again. events empty means every event type.
func (w *Service) SetEndpoint(ctx context.Context, projectID, rawURL string, events []string) (*store.WebhookEndpoint, error) {
	if err := w.checkURL(rawURL); err != nil {
		return nil, err
	}
	for _, e := range events {
		if !slices.Contains(EventTypes, e) {
			return nil, problem.Invalid("events", fmt.Sprintf("%q is not an event type (%s)", e, strings.Join(EventTypes, ", ")))
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
	secret, err := NewSecret()
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
func (w *Service) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem.Invalid("url", "is not an absolute http(s) URL")
	}
	if w.cfg.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err == nil && !PublicAddr(ip)) || strings.EqualFold(host, "localhost") {
		return problem.Invalid("url", "points to a private, loopback or link-local address (set SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true to allow it)")
	}
	return nil
}

// Endpoints lists a project's endpoints, newest first.
func (w *Service) Endpoints(ctx context.Context, projectID string) ([]store.WebhookEndpoint, error) {
	return w.cfg.Store.ListWebhookEndpoints(ctx, projectID, false)
}

// RotateSecret gives an endpoint a new secret; the old one keeps signing beside it for
// SecretGrace, so receivers can switch without losing a delivery.
func (w *Service) RotateSecret(ctx context.Context, id string) (*store.WebhookEndpoint, error) {
	e, err := w.cfg.Store.GetWebhookEndpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	secret, err := NewSecret()
	if err != nil {
		return nil, err
	}
	now := w.now()
	if err := w.cfg.Store.UpdateWebhookEndpoint(ctx, id, map[string]any{"secret": secret, "previous_secret": e.Secret,
		"previous_secret_until": now.Add(SecretGrace), "updated_at": now}); err != nil {
		return nil, err
	}
	return w.cfg.Store.GetWebhookEndpoint(ctx, id)
}

// SetEnabled enables or disables an endpoint. A disabled endpoint gets no new deliveries, and
// its pending ones fail at their next attempt (they can be replayed once it is enabled).
// Enabling clears the failure streak.
func (w *Service) SetEnabled(ctx context.Context, id string, enabled bool) (*store.WebhookEndpoint, error) {
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
func (w *Service) Deliveries(ctx context.Context, projectID string, failedOnly bool, limit int) ([]store.WebhookDelivery, error) {
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
func (w *Service) Replay(ctx context.Context, id string) ([]store.WebhookDelivery, error) {
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
			return nil, problem.Errorf(problem.TypeConflict, "endpoint %s is disabled: enable it before replaying", e.ID)
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
	return nil, problem.Invalid("id", "is neither a delivery (whd_…) nor an event (evt_…) id")
}

// ReplaySince replays every failed delivery of the project's events since a time, to its
// endpoint if that is enabled (once per event and endpoint).
func (w *Service) ReplaySince(ctx context.Context, projectID string, since time.Time) ([]store.WebhookDelivery, error) {
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
func (w *Service) enqueue(ctx context.Context, ps []pair) ([]store.WebhookDelivery, error) {
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

// --- Jobs of earlier releases ----------------------------------------------------------

type fanoutWorker struct {
	river.WorkerDefaults[store.EventFanoutArgs]
	w *Service
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

// deliveryWorker works the attempt jobs of earlier releases: the delivery's row is its queue now
// (a pending delivery is due at its next_attempt_at), so the job only wakes the deliverers.
type deliveryWorker struct {
	river.WorkerDefaults[store.DeliverWebhookArgs]
	w *Service
}

func (d *deliveryWorker) Work(context.Context, *river.Job[store.DeliverWebhookArgs]) error {
	d.w.cfg.Store.Wake(store.WakeWebhooks)
	return nil
}
