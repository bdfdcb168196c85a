package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
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
	for i := range evs {
		evs[i].ID, evs[i].CreatedAt = NewID(PrefixEvent), at
		projects[i] = evs[i].ProjectID
	}
	eps, err := s.insertEventsFindEndpoints(ctx, evs, uniq(projects))
	if err != nil || len(eps) == 0 {
		return err
	}
	var ds []WebhookDelivery
	for _, e := range evs {
		for i := range eps {
			if ep := &eps[i]; ep.ProjectID == e.ProjectID && ep.Subscribed(e.Type) {
				ds = append(ds, PendingDelivery(e.ProjectID, ep.ID, e.ID, e.Type, at))
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	return s.InsertWebhookDeliveries(ctx, ds)
}

// eventsPerStatement bounds the rows of one INSERT (PostgreSQL takes at most 65,535 parameters).
const eventsPerStatement = 1000

// insertEventsFindEndpoints inserts events and returns the enabled webhook endpoints of the
// projects; on PostgreSQL the statement of the last rows does both, one round trip instead of two.
func (s *Store) insertEventsFindEndpoints(ctx context.Context, evs []Event, projects []string) ([]WebhookEndpoint, error) {
	var eps []WebhookEndpoint
	if s.dialect != Postgres {
		if err := s.q(ctx).CreateInBatches(&evs, eventsPerStatement).Error; err != nil {
			return nil, translate(err, "insert events")
		}
		err := s.q(ctx).Where("project_id IN ? AND enabled = ?", projects, true).Order("id").Find(&eps).Error
		return eps, translate(err, "find webhook endpoints")
	}
	for len(evs) > 0 {
		n := min(len(evs), eventsPerStatement)
		var sb strings.Builder
		sb.WriteString("INSERT INTO events (id, project_id, account_id, type, data, created_at) VALUES ")
		args := make([]any, 0, 6*n+2)
		for i, e := range evs[:n] {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, e.ID, e.ProjectID, e.AccountID, e.Type, e.Data, e.CreatedAt)
		}
		if evs = evs[n:]; len(evs) > 0 {
			if err := s.q(ctx).Exec(sb.String(), args...).Error; err != nil {
				return nil, translate(err, "insert events")
			}
			continue
		}
		q := "WITH e AS (" + sb.String() + ") SELECT * FROM webhook_endpoints WHERE project_id IN ? AND enabled = ? ORDER BY id"
		if err := s.q(ctx).Raw(q, append(args, projects, true)...).Scan(&eps).Error; err != nil {
			return nil, translate(err, "insert events")
		}
	}
	return eps, nil
}

// ListEvents returns a project's events of one type (all types when typ is ""), newest first.
func (s *Store) ListEvents(ctx context.Context, projectID, typ string, p Page) ([]Event, Cursors, error) {
	q := s.q(ctx).Model(&Event{}).Where("project_id = ?", projectID)
	if typ != "" {
		q = q.Where("type = ?", typ)
	}
	return paginate(q, p, func(e *Event) string { return e.ID })
}
