package store

import (
	"context"
	"encoding/json"
	"fmt"
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
// change the event describes: it also enqueues the event's webhook fan-out job (EventFanoutArgs)
// in that transaction.
func (s *Store) InsertEvent(ctx context.Context, projectID, accountID, typ string, data any) (*Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s event: %w", typ, err)
	}
	e := &Event{ID: NewID(PrefixEvent), ProjectID: projectID, AccountID: accountID, Type: typ, Data: string(b), CreatedAt: now()}
	if err := s.q(ctx).Create(e).Error; err != nil {
		return nil, translate(err, "insert event")
	}
	// The webhook fan-out job commits (or rolls back) with the event: no event is ever lost
	// to webhooks, and none is announced that did not happen.
	if err := s.InsertJob(ctx, EventFanoutArgs{EventID: e.ID, ProjectID: projectID, Type: typ}, nil); err != nil {
		return nil, err
	}
	return e, nil
}

// ListEvents returns a project's events of one type (all types when typ is ""), newest first.
func (s *Store) ListEvents(ctx context.Context, projectID, typ string, p Page) ([]Event, Cursors, error) {
	q := s.q(ctx).Model(&Event{}).Where("project_id = ?", projectID)
	if typ != "" {
		q = q.Where("type = ?", typ)
	}
	return paginate(q, p, func(e *Event) string { return e.ID })
}
