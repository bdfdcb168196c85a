package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/kit"
)

// PrefixEvent is the TypeID prefix of events; an event's id is its webhook-id.
const PrefixEvent = "evt"

// Event is something a customer hears about: the spec's envelope (account_id, type, timestamp
// = CreatedAt, data) plus the project it belongs to. Events are written in the same transaction
// as the change that caused them.
type Event struct {
	ID        string
	ProjectID string
	AccountID string
	Type      string
	// Data is the event's data object as JSON.
	Data      string
	CreatedAt time.Time
	// Traceparent is the W3C traceparent of the work that made the event (a message's is the
	// request that sent it), when tracing recorded it: the event's webhook attempts continue it
	// and send it to the endpoint.
	Traceparent *string
}

// InsertEvent records an event; data is marshalled to JSON. Call it inside the transaction of the
// change the event describes: see InsertEvents.
func (s *Store) InsertEvent(ctx context.Context, projectID, accountID, typ string, data any) (*Event, error) {
	e, err := NewEvent(projectID, accountID, typ, data)
	if err != nil {
		return nil, err
	}
	evs := []Event{e}
	if err := s.InsertEvents(ctx, evs); err != nil {
		return nil, err
	}
	return &evs[0], nil
}

// NewEvent returns an event to insert with InsertEvents; data is marshalled to JSON.
func NewEvent(projectID, accountID, typ string, data any) (Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("store: encode %s event: %w", typ, err)
	}
	return Event{ProjectID: projectID, AccountID: accountID, Type: typ, Data: string(b)}, nil
}

// InsertEvents records events (setting their ids and times) and fans them out to webhooks: a
// delivery, with its first attempt's job, per enabled endpoint of the event's project subscribed
// to its type. Call it inside the transaction of the change the events describe: the deliveries
// commit (or roll back) with it, so no event is ever lost to webhooks and none is announced that
// did not happen. An endpoint gets the events committed after it was created or enabled.
func (s *Store) InsertEvents(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	at := now()
	projects := make([]string, len(evs))
	tp := kit.Traceparent(ctx)
	for i := range evs {
		evs[i].ID, evs[i].CreatedAt = NewID(PrefixEvent), at
		projects[i] = evs[i].ProjectID
		if evs[i].Traceparent == nil {
			evs[i].Traceparent = tp
		}
	}
	if s.dialect == Postgres {
		return s.insertEventsAndDeliveries(ctx, evs, at)
	}
	if err := s.q(ctx).CreateInBatches(&evs, eventsPerStatement).Error; err != nil {
		return translate(err, "insert events")
	}
	var eps []WebhookEndpoint
	if err := s.q(ctx).Where("project_id IN ? AND enabled = ?", uniq(projects), true).Order("id").Find(&eps).Error; err != nil {
		return translate(err, "find webhook endpoints")
	}
	var ds []WebhookDelivery
	for _, e := range evs {
		for i := range eps {
			if ep := &eps[i]; ep.ProjectID == e.ProjectID && ep.Subscribed(e.Type) {
				ds = append(ds, PendingDelivery(e.ProjectID, ep.ID, e.ID, e.Type, at))
			}
		}
	}
	return s.InsertWebhookDeliveries(ctx, ds)
}

// eventsPerStatement bounds the rows of one INSERT (PostgreSQL takes at most 65,535 parameters).
const eventsPerStatement = 1000

// deliveryIDsPerEvent is how many delivery ids insertEventsAndDeliveries brings with each event.
// Ids are TypeIDs made here, so the statement can only create as many deliveries of an event as
// it is given ids; a project with more subscribed endpoints costs a second statement for the rest.
const deliveryIDsPerEvent = 2

// insertEventsAndDeliveries is InsertEvents on PostgreSQL: for up to eventsPerStatement events at a
// time, one statement inserts them, finds the enabled endpoints of their projects subscribed to
// their types (an endpoint's events list is comma-separated, empty for all), and inserts a
// pending delivery per pair, numbered within its event and named by that event's ids, with its
// first attempt's job, as InsertWebhookDeliveries does. It returns the pairs beyond the ids,
// which InsertWebhookDeliveries then inserts.
func (s *Store) insertEventsAndDeliveries(ctx context.Context, evs []Event, at time.Time) error {
	first, _ := plainJobs([]river.InsertManyParams{{Args: DeliverWebhookArgs{}}}, at)
	job := first[0]
	// Each row of v brings its event's delivery ids in columns d1, d2, …
	cols, refs, row := make([]string, deliveryIDsPerEvent), make([]string, deliveryIDsPerEvent), "(?, ?, ?, ?, ?, ?::timestamptz, ?"
	for i := range cols {
		cols[i] = "d" + strconv.Itoa(i+1)
		refs[i] = "v." + cols[i]
		row += ", ?"
	}
	row += ")"
	var rest []WebhookDelivery
	for len(evs) > 0 {
		n := min(len(evs), eventsPerStatement)
		var sb strings.Builder
		sb.WriteString("WITH v (id, project_id, account_id, type, data, created_at, traceparent, " + strings.Join(cols, ", ") + ") AS (VALUES ")
		args := make([]any, 0, (7+deliveryIDsPerEvent)*n+9)
		for i, e := range evs[:n] {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(row)
			args = append(args, e.ID, e.ProjectID, e.AccountID, e.Type, e.Data, e.CreatedAt, e.Traceparent)
			for range deliveryIDsPerEvent {
				args = append(args, NewID(PrefixWebhookDelivery))
			}
		}
		sb.WriteString(`), e AS (INSERT INTO events (id, project_id, account_id, type, data, created_at, traceparent)
				SELECT id, project_id, account_id, type, data, created_at, traceparent FROM v),
			p AS (SELECT v.id AS event_id, v.project_id, v.type AS event_type, w.id AS endpoint_id,
					(ARRAY[` + strings.Join(refs, ", ") + `])[row_number() OVER (PARTITION BY v.id)::int] AS delivery_id
				FROM v JOIN webhook_endpoints w ON w.project_id = v.project_id AND w.enabled
					AND (w.events = '' OR v.type = ANY (string_to_array(w.events, ',')))),
			d AS (INSERT INTO webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempts, created_at, updated_at)
				SELECT delivery_id, project_id, endpoint_id, event_id, event_type, ?, 0, ?, ?
				FROM p WHERE delivery_id IS NOT NULL RETURNING id),
			j AS (INSERT INTO river_job (args, kind, max_attempts, priority, queue, scheduled_at, state)
				SELECT jsonb_build_object('delivery_id', d.id, 'attempt', 1), ?, ?, ?, ?, ?, ?::river_job_state FROM d)
			SELECT event_id, project_id, event_type, endpoint_id FROM p WHERE delivery_id IS NULL`)
		args = append(args, DeliveryPending, at, at,
			job.kind, job.maxAttempts, job.priority, job.queue, job.scheduledAt.UTC(), string(job.state))
		var over []struct{ EventID, ProjectID, EventType, EndpointID string }
		if err := scan(s.q(ctx).Raw(sb.String(), args...), &over).Error; err != nil {
			return translate(err, "insert events")
		}
		for _, o := range over {
			rest = append(rest, PendingDelivery(o.ProjectID, o.EndpointID, o.EventID, o.EventType, at))
		}
		evs = evs[n:]
	}
	return s.InsertWebhookDeliveries(ctx, rest)
}

// ListEvents returns a project's events of one type (all types when typ is ""), newest first.
func (s *Store) ListEvents(ctx context.Context, projectID, typ string, p Page) ([]Event, Cursors, error) {
	q := s.q(ctx).Model(&Event{}).Where("project_id = ?", projectID)
	if typ != "" {
		q = q.Where("type = ?", typ)
	}
	return paginate(q, p, func(e *Event) string { return e.ID })
}
