package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard/switchboard/kit"
)

// This file is the SQL of publishing events: every event is written, with its webhook
// deliveries, by InsertEvents (which webhooks.Publish calls for the services), by a pipeline
// statement that records a step and its event together (a send batch's conversation.created,
// message.sent, receipts) and embeds eventsFanout, or, for an operator's test event to one
// endpoint, by InsertEventFor. Nothing else writes events or fans them out.

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
	// subject names the row whose change the event announces, for statements that record an
	// event only when they changed its row (RecordSent).
	subject string `gorm:"-"`
}

// NewEvent returns an event to publish (webhooks.Publish, InsertEvents); data is marshalled to
// JSON, by its own AppendJSON when it has one (JSONAppender).
func NewEvent(projectID, accountID, typ string, data any) (Event, error) {
	if a, ok := data.(JSONAppender); ok {
		buf := eventJSONBuffers.Get().(*[]byte)
		b, ok := a.AppendJSON((*buf)[:0])
		e := Event{ProjectID: projectID, AccountID: accountID, Type: typ, Data: string(b)}
		if cap(b) <= 64<<10 {
			*buf = b
			eventJSONBuffers.Put(buf)
		}
		if ok {
			return e, nil
		}
	}
	b, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("store: encode %s event: %w", typ, err)
	}
	return Event{ProjectID: projectID, AccountID: accountID, Type: typ, Data: string(b)}, nil
}

// JSONAppender is event data that writes its JSON itself, byte for byte as json.Marshal would,
// without reflection; ok is false where json.Marshal would fail.
type JSONAppender interface {
	AppendJSON(b []byte) (_ []byte, ok bool)
}

// eventJSONBuffers are NewEvent's buffers for a JSONAppender's bytes.
var eventJSONBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// InsertEvents records events (setting their ids and times) and fans them out to webhooks: a
// pending delivery, due at once, per enabled endpoint of the event's project subscribed to its
// type. Call it inside the transaction of the change the events describe (or, outside one, as
// the change's own statement): the deliveries commit (or roll back) with it, so no event is ever
// lost to webhooks and none is announced that did not happen. An endpoint gets the events
// committed after it was created or enabled. Services publish with webhooks.Publish, which calls
// it; the store's own statements call it directly (a lint rule keeps it so).
func (s *Store) InsertEvents(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	at := now()
	prepareEvents(ctx, evs, at)
	if s.dialect == Postgres {
		if !s.inTx() {
			return s.execEventsPG(ctx, evs, at, func(ea *eventArrays, slots int) (string, []any) {
				return "WITH " + eventsFanout(1, slots, ""), ea.args(at)
			})
		}
		return s.insertEventsAndDeliveries(ctx, evs, at)
	}
	projects := make([]string, len(evs))
	for i := range evs {
		projects[i] = evs[i].ProjectID
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

// deliveryIDsPerEvent is how many delivery ids a statement of eventsFanout brings with each event
// at first. Ids are TypeIDs made here, so the statement can only create as many deliveries of an
// event as it is given ids; a project with more subscribed endpoints costs a second statement.
const deliveryIDsPerEvent = 2

// deliverySlots are the delivery ids per event that a statement of eventsFanout brings, in turn,
// as long as an event has more subscribed endpoints than the last statement had ids for.
var deliverySlots = []int{deliveryIDsPerEvent, 16, 128}

// insertEventsAndDeliveries is InsertEvents on PostgreSQL inside a transaction: one statement of
// eventsFanout, then InsertWebhookDeliveries for the pairs beyond the ids it was given.
func (s *Store) insertEventsAndDeliveries(ctx context.Context, evs []Event, at time.Time) error {
	q := "WITH " + eventsFanout(1, deliveryIDsPerEvent, "") + "SELECT event_id, project_id, event_type, endpoint_id, " + deliveriesMade + " FROM p WHERE delivery_id IS NULL UNION ALL SELECT '', '', '', '', " + eventsMade
	rows, err := sqlTx(s.db).QueryContext(ctx, q, newEventArrays(evs, deliveryIDsPerEvent).args(at)...)
	if err != nil {
		return translate(err, "insert events")
	}
	defer rows.Close()
	var rest []WebhookDelivery
	var made int64
	for rows.Next() {
		var eventID, projectID, eventType, endpointID string
		if err := rows.Scan(&eventID, &projectID, &eventType, &endpointID, &made); err != nil {
			return translate(err, "insert events")
		}
		if eventID != "" {
			rest = append(rest, PendingDelivery(projectID, endpointID, eventID, eventType, at))
		}
	}
	if err := rows.Err(); err != nil {
		return translate(err, "insert events")
	}
	_ = rows.Close()
	if made > 0 {
		s.wake(WakeWebhooks)
	}
	return s.InsertWebhookDeliveries(ctx, rest)
}

// prepareEvents gives events their ids and times, and the trace of ctx when they have none.
func prepareEvents(ctx context.Context, evs []Event, at time.Time) {
	tp := kit.Traceparent(ctx)
	for i := range evs {
		evs[i].ID, evs[i].CreatedAt = NewID(PrefixEvent), at
		if evs[i].Traceparent == nil {
			evs[i].Traceparent = tp
		}
	}
}

// eventArrays are events as the columns of an unnest, with the ids of their webhook deliveries.
type eventArrays struct {
	id, project, account, typ, data, subject []string
	tp                                       []*string
	at                                       []time.Time
	// deliveries[k] holds each event's (k+1)th delivery id.
	deliveries [][]string
}

func newEventArrays(evs []Event, slots int) *eventArrays {
	n := len(evs)
	a := &eventArrays{id: make([]string, n), project: make([]string, n), account: make([]string, n), typ: make([]string, n),
		data: make([]string, n), subject: make([]string, n), tp: make([]*string, n), at: make([]time.Time, n)}
	for i, e := range evs {
		a.id[i], a.project[i], a.account[i], a.typ[i] = e.ID, e.ProjectID, e.AccountID, e.Type
		a.data[i], a.subject[i], a.tp[i], a.at[i] = e.Data, e.subject, e.Traceparent, e.CreatedAt
	}
	a.deliveries = make([][]string, slots)
	for k := range a.deliveries {
		a.deliveries[k] = make([]string, len(evs))
		for i := range evs {
			a.deliveries[k][i] = NewID(PrefixWebhookDelivery)
		}
	}
	return a
}

// args are the parameters of eventsFanout, in its order, with at the deliveries' time.
func (a *eventArrays) args(at time.Time) []any {
	out := []any{a.id, a.project, a.account, a.typ, a.data, a.at, a.tp, a.subject}
	for _, d := range a.deliveries {
		out = append(out, d)
	}
	return append(out, at)
}

// eventsFanout renders the common table expressions that record events and their webhook
// deliveries in the statement that makes the change they announce (PostgreSQL): ev unnests the
// events from parameters $first on (see eventArrays.args), keeping those that filter (a WHERE on
// ev, or "") lets through; e inserts them; r ranks, for each project and event type among them,
// the project's enabled endpoints subscribed to that type (an endpoint's events list is
// comma-separated, empty for all), and p pairs each event with its type's endpoints, the kth
// named by the event's kth delivery id; d inserts a pending delivery per pair, due at once, and
// dwq puts it in the webhook queue. Both read p, where d returned its rows for dwq and the count:
// a data-modifying CTE runs to its end whether or not anything reads it, and without RETURNING
// nothing keeps its rows (0.33 µs of PostgreSQL's CPU an event of 11.4, in statements of 158
// with one endpoint). An event with more endpoints than ids stops the statement with a division
// by zero (SQLSTATE 22012) before anything is written, and execEventsPG runs it again with more
// ids.
// nt notifies EmbedChannel of each account of the events that an instance watches (see
// WatchAccounts), at the commit; it runs only where the statement reads it, which eventsGuard
// does. The statement that uses them ends with eventsGuard.
//
// r ranks endpoints once per project and type of the statement's events rather than once per
// event: p's window function over every pair sorted the pairs by event id (a text sort) and
// matched each endpoint's events list against each event's type, about 0.5 µs of PostgreSQL's
// CPU an event in statements of 170 with one endpoint (13.7-13.8 against 13.2-13.3 µs), 1 µs
// with four.
//
// nt did what the trigger events_embed_notify (migration 0020) did for every statement that
// inserted events, at a cost the trigger did not have: a statement-level trigger with a transition
// table copies each new row into it and runs a PL/pgSQL function, about 35-45 µs a statement in
// EXPLAIN ANALYZE of a receipts' events statement of 86 (1.09 against 1.04 ms, medians of 150),
// where the lookup in nt costs next to nothing. Every statement that inserts events on PostgreSQL
// is one of eventsFanout's but InsertEventFor's, which notifies as nt does (notifyWatchers).
func eventsFanout(first, slots int, filter string) string {
	var sb strings.Builder
	p := func(cast string) string {
		s := "$" + strconv.Itoa(first) + cast
		first++
		return s
	}
	cols, refs := make([]string, slots), make([]string, slots)
	fmt.Fprintf(&sb, "ev AS (SELECT * FROM unnest(%s, %s, %s, %s, %s, %s, %s, %s", p("::text[]"), p("::text[]"), p("::text[]"),
		p("::text[]"), p("::text[]"), p("::timestamptz[]"), p("::text[]"), p("::text[]"))
	for k := range slots {
		cols[k], refs[k] = "d"+strconv.Itoa(k+1), "ev.d"+strconv.Itoa(k+1)
		sb.WriteString(", " + p("::text[]"))
	}
	at := p("::timestamptz")
	fmt.Fprintf(&sb, `) AS ev(id, project_id, account_id, type, data, created_at, traceparent, subject, %s) %s),
		e AS (INSERT INTO events (id, project_id, account_id, type, data, created_at, traceparent)
			SELECT id, project_id, account_id, type, data, created_at, traceparent FROM ev),
		r AS (SELECT t.project_id, t.type, w.id, row_number() OVER (PARTITION BY t.project_id, t.type ORDER BY w.id)::int AS k
			FROM (SELECT DISTINCT project_id, type FROM ev) t JOIN webhook_endpoints w ON w.project_id = t.project_id AND w.enabled
				AND (w.events = '' OR t.type = ANY (string_to_array(w.events, ',')))),
		p AS (SELECT ev.id AS event_id, ev.project_id, ev.type AS event_type, r.id AS endpoint_id, (ARRAY[%s])[r.k] AS delivery_id
			FROM ev JOIN r ON r.project_id = ev.project_id AND r.type = ev.type),
		d AS (INSERT INTO webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempts,
				next_attempt_at, created_at, updated_at)
			SELECT delivery_id, project_id, endpoint_id, event_id, event_type, 'pending', 0, %[4]s, %[4]s, %[4]s
			FROM p WHERE delivery_id IS NOT NULL),
		dwq AS (INSERT INTO webhook_queue (delivery_id, due_at, endpoint_id, event_id)
			SELECT delivery_id, %[4]s, endpoint_id, event_id FROM p WHERE delivery_id IS NOT NULL),
		nt AS (SELECT a.account_id, pg_notify('%[5]s', a.account_id) FROM (SELECT DISTINCT account_id FROM ev) a
			WHERE (SELECT w.until FROM embed_watches w WHERE w.account_id = a.account_id) > now())
		`, strings.Join(cols, ", "), filter, strings.Join(refs, ", "), at, EmbedChannel)
	return sb.String()
}

// eventsGuard ends a statement of eventsFanout: it returns how many deliveries it inserted, or
// stops the statement when an event had more endpoints than delivery ids. It reads nt, so that
// the watchers are notified.
const eventsGuard = `SELECT (` + eventsMade + `) / CASE WHEN EXISTS (SELECT 1 FROM p WHERE delivery_id IS NULL) THEN 0 ELSE 1 END`

// eventsMade is how many deliveries a statement of eventsFanout inserted (deliveriesMade), read
// with nt (which notifies the watchers of its events' accounts).
const eventsMade = deliveriesMade + ` + 0 * (SELECT COUNT(*) FROM nt)`

// deliveriesMade counts p's pairs with ids, each of which d inserts (or fails the statement).
const deliveriesMade = `(SELECT COUNT(*) FROM p WHERE delivery_id IS NOT NULL)`

// execEventsPG runs a statement built by build around eventsFanout (with eventsGuard last, at the
// top level), with two delivery ids per event, then, should an event have more endpoints, with
// more. It wakes the webhook deliveries when it made some.
func (s *Store) execEventsPG(ctx context.Context, evs []Event, at time.Time, build func(ea *eventArrays, slots int) (string, []any)) error {
	for _, slots := range deliverySlots {
		q, args := build(newEventArrays(evs, slots), slots)
		var n int64
		err := s.pgxConn(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, q+eventsGuard, args...).Scan(&n) })
		if isDivisionByZero(err) {
			continue
		}
		if err != nil {
			return translate(err, "record events")
		}
		if n > 0 {
			s.wake(WakeWebhooks)
		}
		return nil
	}
	return errors.New("store: record events: a project has more than 128 webhook endpoints for one event type")
}

// keepEvents takes the rows of the events that deliveries about to be written name FOR KEY SHARE,
// as the foreign key from webhook_deliveries to events did before migration 0032 (PostgreSQL,
// inside the writing transaction): an event being deleted then makes this wait and fail, and a
// delete that comes after waits for this transaction's end and sees its deliveries (the guard
// events_keep_deliveries). It fails with the key's error (SQLSTATE 23503) when an event is gone.
// The fan-out of eventsFanout needs none of it: its events are its own statement's.
func (s *Store) keepEvents(ctx context.Context, ids []string) error {
	ids = uniq(ids)
	var found []string
	if err := s.q(ctx).Raw("SELECT id FROM events WHERE id IN ? FOR KEY SHARE", ids).Scan(&found).Error; err != nil {
		return translate(err, "lock events")
	}
	if len(found) == len(ids) {
		return nil
	}
	missing := without(ids, found)
	return translate(&pgconn.PgError{Severity: "ERROR", Code: "23503", TableName: "webhook_deliveries",
		Message: fmt.Sprintf("insert on table \"webhook_deliveries\" names event %s, which is not in table \"events\"", missing[0])},
		"insert webhook deliveries")
}

// InsertEventFor records an event that goes to one endpoint only (an operator's test event), with
// its delivery; call it inside a transaction. The service publishes with webhooks.PublishSample.
func (s *Store) InsertEventFor(ctx context.Context, ev *Event, endpointID string) (*WebhookDelivery, error) {
	at := now()
	ev.ID, ev.CreatedAt = NewID(PrefixEvent), at
	if err := s.q(ctx).Create(ev).Error; err != nil {
		return nil, translate(err, "insert event")
	}
	if err := s.notifyWatchers(ctx, ev.AccountID); err != nil {
		return nil, err
	}
	ds := []WebhookDelivery{PendingDelivery(ev.ProjectID, endpointID, ev.ID, ev.Type, at)}
	if err := s.InsertWebhookDeliveries(ctx, ds); err != nil {
		return nil, err
	}
	return &ds[0], nil
}

// notifyWatchers notifies EmbedChannel of an account's new events when an instance watches it,
// at the commit of the caller's transaction (PostgreSQL; as nt does in eventsFanout).
func (s *Store) notifyWatchers(ctx context.Context, accountID string) error {
	if s.dialect != Postgres {
		return nil
	}
	return translate(s.q(ctx).Exec("SELECT pg_notify(?, account_id) FROM embed_watches WHERE account_id = ? AND until > now()",
		EmbedChannel, accountID).Error, "notify watchers")
}

// ListEvents returns a project's events of one type (all types when typ is ""), newest first.
func (s *Store) ListEvents(ctx context.Context, projectID, typ string, p Page) ([]Event, Cursors, error) {
	q := s.q(ctx).Model(&Event{}).Where("project_id = ?", projectID)
	if typ != "" {
		q = q.Where("type = ?", typ)
	}
	return paginate(q, p, func(e *Event) string { return e.ID })
}
