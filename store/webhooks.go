package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
)

// Type prefixes of webhook endpoints and deliveries.
const (
	PrefixWebhookEndpoint = "whe"
	PrefixWebhookDelivery = "whd"
)

// QueueWebhookFanout is the job queue of EventFanoutArgs.
const QueueWebhookFanout = "webhook_fanout"

// QueueWebhooks is the job queue of delivery attempts (DeliverWebhookArgs).
const QueueWebhooks = "webhooks"

// DeliverWebhookArgs is one delivery attempt (1-based). InsertEvents enqueues the first attempt
// of each delivery with the event; each failed attempt inserts the next, scheduled per the retry
// schedule, in the transaction that records the failure. The webhook service works it.
type DeliverWebhookArgs struct {
	DeliveryID string `json:"delivery_id"`
	Attempt    int    `json:"attempt"`
}

// Kind names the job.
func (DeliverWebhookArgs) Kind() string { return "webhook_delivery" }

// InsertOpts puts attempts on the webhooks queue.
func (DeliverWebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhooks}
}

// EventFanoutArgs is the fan-out job of one event, as releases before the inline fan-out of
// InsertEvents enqueued it with every event; the webhook service still works the ones a database
// may hold from then.
type EventFanoutArgs struct {
	EventID   string `json:"event_id"`
	ProjectID string `json:"project_id"`
	Type      string `json:"type"`
}

// Kind names the job.
func (EventFanoutArgs) Kind() string { return "webhook_fanout" }

// InsertOpts puts the job on its own queue.
func (EventFanoutArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhookFanout}
}

// WebhookEndpoint is a URL a project's events are POSTed to.
type WebhookEndpoint struct {
	ID        string
	ProjectID string
	URL       string
	// Events is the comma-separated list of subscribed event types; empty means every type.
	Events string
	// Secret is the current signing secret (whsec_…). PreviousSecret still signs, beside it,
	// until PreviousSecretUntil: a rotation's grace period.
	Secret              string
	PreviousSecret      *string
	PreviousSecretUntil *time.Time
	Enabled             bool
	// DisabledReason says why a disabled endpoint was disabled (by the operator, or after
	// failing for days).
	DisabledReason *string
	// FailingSince is the first failed attempt since the last success; nil while healthy.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// EventTypes returns the subscribed event types; nil means every type.
func (e *WebhookEndpoint) EventTypes() []string {
	if e.Events == "" {
		return nil
	}
	return strings.Split(e.Events, ",")
}

// Subscribed reports whether the endpoint receives events of type typ.
func (e *WebhookEndpoint) Subscribed(typ string) bool {
	if e.Events == "" {
		return true
	}
	for _, t := range strings.Split(e.Events, ",") {
		if t == typ {
			return true
		}
	}
	return false
}

// Delivery states: pending while attempts remain, then succeeded or failed.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is the delivery of one event to one endpoint: a series of attempts, each a
// job. A replay is a new delivery of the same event (the same webhook-id).
type WebhookDelivery struct {
	ID         string
	ProjectID  string
	EndpointID string
	EventID    string
	EventType  string
	Status     string
	Attempts   int
	// LastStatus is the HTTP status of the last attempt; nil when it got no answer.
	LastStatus *int
	// LastError describes the last failed attempt.
	LastError     *string
	NextAttemptAt *time.Time
	DeliveredAt   *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// DeliveryWork is what one delivery attempt needs: the delivery, its endpoint and its event.
type DeliveryWork struct {
	Delivery WebhookDelivery
	Endpoint WebhookEndpoint
	Event    Event
	// QueueRow is where the claim left the delivery's queue row (PostgreSQL): give it back in the
	// attempt's DeliveryOutcome.
	QueueRow QueueRow
}

// CreateWebhookEndpoint inserts an endpoint.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error {
	return translate(s.q(ctx).Create(e).Error, "create webhook endpoint")
}

// GetWebhookEndpoint returns one endpoint.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error) {
	var e WebhookEndpoint
	if err := s.q(ctx).Where("id = ?", id).Take(&e).Error; err != nil {
		return nil, translate(err, "get webhook endpoint")
	}
	return &e, nil
}

// FindWebhookEndpoint returns the project's endpoint with this URL.
func (s *Store) FindWebhookEndpoint(ctx context.Context, projectID, url string) (*WebhookEndpoint, error) {
	var e WebhookEndpoint
	if err := s.q(ctx).Where("project_id = ? AND url = ?", projectID, url).Order("id").Take(&e).Error; err != nil {
		return nil, translate(err, "find webhook endpoint")
	}
	return &e, nil
}

// ListWebhookEndpoints returns a project's endpoints, newest first; enabledOnly leaves out the
// disabled ones.
func (s *Store) ListWebhookEndpoints(ctx context.Context, projectID string, enabledOnly bool) ([]WebhookEndpoint, error) {
	q := s.q(ctx).Where("project_id = ?", projectID)
	if enabledOnly {
		q = q.Where("enabled = ?", true)
	}
	var out []WebhookEndpoint
	if err := q.Order("id DESC").Find(&out).Error; err != nil {
		return nil, translate(err, "list webhook endpoints")
	}
	return out, nil
}

// UpdateWebhookEndpoint sets fields (column name to value) of an endpoint.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, id string, fields map[string]any) error {
	res := s.q(ctx).Model(&WebhookEndpoint{}).Where("id = ?", id).Updates(fields)
	if res.Error != nil {
		return translate(res.Error, "update webhook endpoint")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("update webhook endpoint %s: %w", id, ErrNotFound)
	}
	return nil
}

// MarkEndpointHealthy clears an endpoint's failure streak after a success.
func (s *Store) MarkEndpointHealthy(ctx context.Context, id string) error {
	return translate(s.q(ctx).Exec("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL", id).Error,
		"mark webhook endpoint healthy")
}

// MarkEndpointFailing starts an endpoint's failure streak at `at` unless one is running, and
// disables the endpoint when the streak began at or before disableBefore. It reports whether
// this call disabled it.
func (s *Store) MarkEndpointFailing(ctx context.Context, id string, at, disableBefore time.Time, reason string) (bool, error) {
	if err := s.q(ctx).Exec("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL", at, id).Error; err != nil {
		return false, translate(err, "mark webhook endpoint failing")
	}
	res := s.q(ctx).Exec(`UPDATE webhook_endpoints SET enabled = ?, disabled_reason = ?, updated_at = ?
		WHERE id = ? AND enabled = ? AND failing_since <= ?`, false, reason, at, id, true, disableBefore)
	if res.Error != nil {
		return false, translate(res.Error, "disable failing webhook endpoint")
	}
	return res.RowsAffected > 0, nil
}

// PendingDelivery returns a new delivery of an event to an endpoint, due at once, to insert with
// InsertWebhookDeliveries.
func PendingDelivery(projectID, endpointID, eventID, eventType string, at time.Time) WebhookDelivery {
	return WebhookDelivery{ID: NewID(PrefixWebhookDelivery), ProjectID: projectID, EndpointID: endpointID,
		EventID: eventID, EventType: eventType, Status: DeliveryPending, NextAttemptAt: &at, CreatedAt: at, UpdatedAt: at}
}

// InsertWebhookDeliveries inserts deliveries, and puts the pending ones in the webhook queue, due
// at their next_attempt_at; call it inside a transaction. On PostgreSQL their events' rows are
// taken FOR KEY SHARE first (keepEvents), as the foreign key to events did.
func (s *Store) InsertWebhookDeliveries(ctx context.Context, ds []WebhookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	for i := range ds {
		if ds[i].Status == DeliveryPending && ds[i].NextAttemptAt == nil {
			at := ds[i].CreatedAt
			ds[i].NextAttemptAt = &at
		}
	}
	if s.dialect == Postgres {
		if !s.inTx() {
			return s.Tx(ctx, func(tx *Store) error { return tx.InsertWebhookDeliveries(ctx, ds) })
		}
		if err := s.keepEvents(ctx, idsOf(ds, func(d WebhookDelivery) string { return d.EventID })); err != nil {
			return err
		}
	}
	if err := s.q(ctx).CreateInBatches(&ds, eventsPerStatement).Error; err != nil {
		return translate(err, "insert webhook deliveries")
	}
	if err := s.enqueueDeliveries(ctx, ds); err != nil {
		return err
	}
	s.wake(WakeWebhooks)
	return nil
}

// GetWebhookDelivery returns one delivery.
func (s *Store) GetWebhookDelivery(ctx context.Context, id string) (*WebhookDelivery, error) {
	var d WebhookDelivery
	if err := s.q(ctx).Where("id = ?", id).Take(&d).Error; err != nil {
		return nil, translate(err, "get webhook delivery")
	}
	return &d, nil
}

// UpdateWebhookDelivery sets fields (column name to value) of a delivery, and keeps the webhook
// queue in step: a delivery that is no longer pending leaves it, a pending one given a
// next_attempt_at is due then, and the queue counts its attempts.
func (s *Store) UpdateWebhookDelivery(ctx context.Context, id string, fields map[string]any) error {
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Model(&WebhookDelivery{}).Where("id = ?", id).Updates(fields).Error; err != nil {
			return translate(err, "update webhook delivery")
		}
		if next, ok := fields["next_attempt_at"].(time.Time); ok {
			if err := tx.q(ctx).Exec(`UPDATE webhook_queue SET due_at = ? WHERE delivery_id = ?`, next.UTC(), id).Error; err != nil {
				return translate(err, "update webhook delivery")
			}
		}
		if err := tx.q(ctx).Exec(`UPDATE webhook_queue SET attempts = (SELECT attempts FROM webhook_deliveries WHERE id = ?)
			WHERE delivery_id = ?`, id, id).Error; err != nil {
			return translate(err, "update webhook delivery")
		}
		return tx.dequeueFinished(ctx, []string{id})
	})
}

// ListWebhookDeliveries returns a project's deliveries newest first, only those in status when
// it is not empty, at most limit.
func (s *Store) ListWebhookDeliveries(ctx context.Context, projectID, status string, limit int) ([]WebhookDelivery, error) {
	q := s.q(ctx).Where("project_id = ?", projectID)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	var out []WebhookDelivery
	if err := q.Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, translate(err, "list webhook deliveries")
	}
	return out, nil
}

// ListFailingWebhookDeliveries returns a project's deliveries whose last attempt failed, newest
// first, at most limit: those failed for good and those still pending a retry.
func (s *Store) ListFailingWebhookDeliveries(ctx context.Context, projectID string, limit int) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	if err := s.q(ctx).Where("project_id = ? AND (status = ? OR (status = ? AND attempts > 0))", projectID, DeliveryFailed, DeliveryPending).
		Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, translate(err, "list failing webhook deliveries")
	}
	return out, nil
}

// WebhookDeliveriesOfEvent returns every delivery of an event, oldest first.
func (s *Store) WebhookDeliveriesOfEvent(ctx context.Context, eventID string) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	if err := s.q(ctx).Where("event_id = ?", eventID).Order("id").Find(&out).Error; err != nil {
		return nil, translate(err, "list deliveries of event")
	}
	return out, nil
}

// FailedDeliveriesSince returns a project's failed deliveries of events that occurred at or
// after since, oldest first.
func (s *Store) FailedDeliveriesSince(ctx context.Context, projectID string, since time.Time) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	err := s.q(ctx).Where(`project_id = ? AND status = ? AND event_id IN (SELECT id FROM events WHERE project_id = ? AND created_at >= ?)`,
		projectID, DeliveryFailed, projectID, since).Order("id").Find(&out).Error
	return out, translate(err, "list failed deliveries")
}

// GetEvent returns one event.
func (s *Store) GetEvent(ctx context.Context, id string) (*Event, error) {
	var e Event
	if err := s.q(ctx).Where("id = ?", id).Take(&e).Error; err != nil {
		return nil, translate(err, "get event")
	}
	return &e, nil
}

// EventsSince returns a project's events that occurred at or after since, oldest first.
func (s *Store) EventsSince(ctx context.Context, projectID string, since time.Time) ([]Event, error) {
	var out []Event
	err := s.q(ctx).Where("project_id = ? AND created_at >= ?", projectID, since).Order("id").Find(&out).Error
	return out, translate(err, "list events since")
}

// DeliveryWorks loads deliveries with their endpoints and events in one query, keyed by
// delivery id; ids that name no delivery are absent.
func (s *Store) DeliveryWorks(ctx context.Context, ids []string) (map[string]*DeliveryWork, error) {
	var rows []struct {
		DID                  string
		DStatus              string
		DAttempts            int
		EID                  string
		EURL                 string
		ESecret              string
		EPreviousSecret      *string
		EPreviousSecretUntil *time.Time
		EEnabled             bool
		EFailingSince        *time.Time
		VID                  string
		VProjectID           string
		VAccountID           string
		VType                string
		VData                string
		VCreatedAt           time.Time
		VTraceparent         *string
	}
	err := scan(s.q(ctx).Raw(`SELECT d.id AS d_id, d.status AS d_status, d.attempts AS d_attempts,
		e.id AS e_id, e.url AS e_url, e.secret AS e_secret, e.previous_secret AS e_previous_secret,
		e.previous_secret_until AS e_previous_secret_until, e.enabled AS e_enabled, e.failing_since AS e_failing_since,
		v.id AS v_id, v.project_id AS v_project_id, v.account_id AS v_account_id, v.type AS v_type, v.data AS v_data,
		v.created_at AS v_created_at, v.traceparent AS v_traceparent
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events v ON v.id = d.event_id
		WHERE d.id IN ?`, uniq(ids)), &rows).Error
	if err != nil {
		return nil, translate(err, "get delivery work")
	}
	out := make(map[string]*DeliveryWork, len(rows))
	for _, row := range rows {
		out[row.DID] = &DeliveryWork{
			Delivery: WebhookDelivery{ID: row.DID, ProjectID: row.VProjectID, EndpointID: row.EID, EventID: row.VID,
				EventType: row.VType, Status: row.DStatus, Attempts: row.DAttempts},
			Endpoint: WebhookEndpoint{ID: row.EID, ProjectID: row.VProjectID, URL: row.EURL, Secret: row.ESecret,
				PreviousSecret: row.EPreviousSecret, PreviousSecretUntil: row.EPreviousSecretUntil, Enabled: row.EEnabled,
				FailingSince: row.EFailingSince},
			Event: Event{ID: row.VID, ProjectID: row.VProjectID, AccountID: row.VAccountID, Type: row.VType, Data: row.VData,
				CreatedAt: row.VCreatedAt, Traceparent: row.VTraceparent},
		}
	}
	return out, nil
}
