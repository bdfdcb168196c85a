package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The group commit of sends (service/send_batch.go): concurrent sends share one read of their
// contexts (LoadSendContexts) and one write (InsertOutboundBatch), on PostgreSQL one statement
// each, on SQLite one transaction for the write.

// HasIdempotencyClaim reports whether ctx carries a request's claim on its Idempotency-Key (see
// WithIdempotencyClaim): what such a request creates is recorded with the key, which the batched
// writes do not do.
func HasIdempotencyClaim(ctx context.Context) bool { return claimOf(ctx) != nil }

// SendContextKey names the context LoadSendContexts reads for one send: the project's account,
// its sender reference (a phone number id or number, "" for the account's first) and the
// recipient.
type SendContextKey struct {
	ProjectID, AccountID, Ref, Recipient string
}

// LoadSendContexts reads the contexts of several sends as LoadSendContext reads one, in one
// statement on PostgreSQL. It returns one context per key, in order; a key whose account does not
// exist (in the project) has a nil context and its ErrNotFound in errs.
func (s *Store) LoadSendContexts(ctx context.Context, keys []SendContextKey) (out []*SendContext, errs []error, err error) {
	out, errs = make([]*SendContext, len(keys)), make([]error, len(keys))
	if s.dialect != Postgres && !s.inTx() {
		return s.loadSendContextsSQLite(ctx, keys)
	}
	if s.inTx() {
		for i, k := range keys {
			sc, err := s.LoadSendContext(ctx, k.ProjectID, k.AccountID, k.Ref, k.Recipient)
			if errors.Is(err, ErrNotFound) {
				errs[i] = err
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			out[i] = sc
		}
		return out, errs, nil
	}
	a := newSendReadArgs(keys)
	err = s.pgxConn(ctx, func(c *pgx.Conn) error {
		// The statement's generic plan, made once per connection: PostgreSQL would otherwise plan
		// it for each batch (its cost estimate for a custom plan of a few sends is lower than the
		// generic plan's), and planning this statement cost 6 times what running it for one send
		// does (BenchmarkLoadSendContexts: 220-380 µs of PostgreSQL's CPU per batch of 1 to 9
		// sends, 40-80 µs with the generic plan). The setting lasts for this statement only: the
		// three statements are one implicit transaction, so an error rolls the SET back too. The
		// generic plan reads contacts through contacts_account_phone even when it was made on an
		// empty table (migration 0031), and the toll-free campaigns through their partial index
		// (the status is a literal).
		b := &pgx.Batch{}
		b.Queue("SET plan_cache_mode = force_generic_plan")
		if len(a.projects) <= sendReadContextsMax {
			b.Queue(loadSendContextsPG, a.projects, a.accounts, a.refs, a.of, a.recipients, a.first).Query(func(rows pgx.Rows) error {
				return a.scan(rows, keys, out)
			})
		} else {
			b.Queue(loadSendContextsEachPG, a.eachArgs(keys)...).Query(func(rows pgx.Rows) error {
				return scanEach(rows, keys, out)
			})
		}
		b.Queue("RESET plan_cache_mode")
		return c.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, nil, translate(err, "load send contexts")
	}
	for i, k := range keys {
		if out[i] == nil {
			errs[i] = fmt.Errorf("load send context of account %s: %w", k.AccountID, ErrNotFound)
		}
	}
	return out, errs, nil
}

// loadSendContextsPG is LoadSendContext's query for several sends. $1-$3 are the batch's distinct
// contexts of an account and a sender (projects, accounts, sender references), each read once,
// and $4-$6 its sends (the position of each one's context from 1, its recipient, and whether it is
// the first send of its context). A row per send whose account exists, numbered by its position
// from 1: the account's and sender's columns on the first send of each context only (NULL, or
// FALSE and 0 where the column is not nullable, on the others, which take the first's), then
// the recipient's contact and conversation. Reading each context once rather than once per send
// spares four index probes a send (the account, the sender, its campaign and its toll-free
// campaigns), and scanning its columns once spares their allocations.
var loadSendContextsPG = func() string {
	first := func(cols ...string) string {
		for i, c := range cols {
			cols[i] = "CASE WHEN i.first THEN " + c + " END"
		}
		return strings.Join(cols, ", ")
	}
	return `SELECT i.n, COALESCE(i.first AND x.archived, FALSE), COALESCE(i.first AND x.quiet_hours, FALSE),
	CASE WHEN i.first THEN x.quiet_hours_start ELSE 0 END, CASE WHEN i.first THEN x.quiet_hours_end ELSE 0 END, ` +
		first("x.time_zone", "x.pn_id", "x.pn_project_id", "x.pn_account_id", "x.number", "x.type", "x.country", "x.name",
			"x.metadata", "x.carrier", "x.campaign_id", "x.attachment_status", "x.created_at", "x.updated_at", "x.campaign_status") + `,
	CASE WHEN i.first THEN x.toll_free ELSE 0 END,
	` + colsOf("k", contactCols) + `, cv.id, cv.created_at, i.c
	FROM unnest($4::int[], $5::text[], $6::bool[]) WITH ORDINALITY AS i(c, recipient, first, n)
	JOIN (SELECT s.n, a.id AS account_id, a.archived_at IS NOT NULL AS archived, a.quiet_hours, a.quiet_hours_start,
			a.quiet_hours_end, a.time_zone, pn.id AS pn_id, pn.project_id AS pn_project_id, pn.account_id AS pn_account_id,
			pn.number, pn.type, pn.country, pn.name, pn.metadata, pn.carrier, pn.campaign_id, pn.attachment_status,
			pn.created_at, pn.updated_at,
			(SELECT c.status FROM campaigns c WHERE c.id = pn.campaign_id) AS campaign_status,
			(SELECT COUNT(*) FROM toll_free_campaigns t WHERE t.phone_number_id = pn.id AND t.status = '` + CampaignActive + `') AS toll_free
		FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS s(project_id, account_id, ref, n)
		JOIN LATERAL (SELECT * FROM accounts a WHERE a.id = s.account_id AND a.project_id = s.project_id LIMIT 1) a ON TRUE
		LEFT JOIN LATERAL (SELECT * FROM phone_numbers pn WHERE pn.account_id = a.id AND pn.project_id = a.project_id
			AND pn.released_at IS NULL AND (s.ref = '' OR pn.id = s.ref OR pn.number = s.ref) ORDER BY pn.id LIMIT 1) pn ON TRUE
	) x ON x.n = i.c
	LEFT JOIN LATERAL (SELECT * FROM contacts k WHERE k.account_id = x.account_id AND k.phone_number = i.recipient LIMIT 1) k ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM conversations cv WHERE cv.contact_id = k.id AND cv.phone_number_id = x.pn_id LIMIT 1) cv ON TRUE`
}()

// sendReadContextsMax is the most contexts of a batch that loadSendContextsPG reads; a batch of
// more (sends of many accounts) takes loadSendContextsEachPG. The generic plan of
// loadSendContextsPG matches each send with its context by a nested loop over the contexts, which
// costs more than it spares once they are many. BenchmarkLoadSendContexts, 256 sends, µs of
// PostgreSQL's CPU a batch against loadSendContextsEachPG's (2 alternating runs each): 1 account
// 400-430 against 1,100; 8 accounts 470-540 against 1,000-1,120; 16, 560-580 against
// 1,020-1,100; 32, 720 against 1,040-1,060; 64, 980-1,000 against 1,040-1,060; 256, 6,840-6,900
// against 3,680-4,140.
const sendReadContextsMax = 32

// loadSendContextsEachPG is LoadSendContext's query for each row of the arrays $1-$4 (projects,
// accounts, sender references, recipients), the account and sender read for every send: one row
// per send whose account exists, numbered by its position from 1, with loadSendContextSQLite's
// columns.
var loadSendContextsEachPG = `SELECT i.n, a.archived_at IS NOT NULL, a.quiet_hours, a.quiet_hours_start, a.quiet_hours_end, a.time_zone,
	pn.id, pn.project_id, pn.account_id, pn.number, pn.type, pn.country, pn.name, pn.metadata, pn.carrier, pn.campaign_id,
	pn.attachment_status, pn.created_at, pn.updated_at,
	(SELECT c.status FROM campaigns c WHERE c.id = pn.campaign_id),
	(SELECT COUNT(*) FROM toll_free_campaigns t WHERE t.phone_number_id = pn.id AND t.status = '` + CampaignActive + `'),
	` + colsOf("k", contactCols) + `, cv.id, cv.created_at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS i(project_id, account_id, ref, recipient, n)
	JOIN LATERAL (SELECT * FROM accounts a WHERE a.id = i.account_id AND a.project_id = i.project_id LIMIT 1) a ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM phone_numbers pn WHERE pn.account_id = a.id AND pn.project_id = a.project_id
		AND pn.released_at IS NULL AND (i.ref = '' OR pn.id = i.ref OR pn.number = i.ref) ORDER BY pn.id LIMIT 1) pn ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM contacts k WHERE k.account_id = a.id AND k.phone_number = i.recipient LIMIT 1) k ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM conversations cv WHERE cv.contact_id = k.id AND cv.phone_number_id = pn.id LIMIT 1) cv ON TRUE`

// eachArgs are loadSendContextsEachPG's parameters for keys.
func (a *sendReadArgs) eachArgs(keys []SendContextKey) []any {
	projects, accounts, refs := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		projects[i], accounts[i], refs[i] = k.ProjectID, k.AccountID, k.Ref
	}
	return []any{projects, accounts, refs, a.recipients}
}

// scanEach reads loadSendContextsEachPG's rows into out.
func scanEach(rows pgx.Rows, keys []SendContextKey, out []*SendContext) error {
	for rows.Next() {
		var r sendContextRow
		if err := rows.Scan(r.dest()...); err != nil {
			return err
		}
		if r.n < 1 || int(r.n) > len(keys) {
			return fmt.Errorf("store: load send contexts: row %d of %d", r.n, len(keys))
		}
		out[r.n-1] = r.context(keys[r.n-1].Recipient)
	}
	return rows.Err()
}

// sendReadArgs are loadSendContextsPG's parameters for a batch of keys.
type sendReadArgs struct {
	projects, accounts, refs []string
	of                       []int32
	recipients               []string
	first                    []bool
}

// newSendReadArgs gathers the distinct contexts of keys, in the order of their first sends.
func newSendReadArgs(keys []SendContextKey) *sendReadArgs {
	a := &sendReadArgs{of: make([]int32, len(keys)), recipients: make([]string, len(keys)), first: make([]bool, len(keys))}
	seen := make(map[[3]string]int32, 1)
	for i, k := range keys {
		ck := [3]string{k.ProjectID, k.AccountID, k.Ref}
		c, ok := seen[ck]
		if !ok {
			a.projects, a.accounts, a.refs = append(a.projects, k.ProjectID), append(a.accounts, k.AccountID), append(a.refs, k.Ref)
			c = int32(len(a.projects))
			seen[ck] = c
		}
		a.of[i], a.recipients[i], a.first[i] = c, k.Recipient, !ok
	}
	return a
}

// scan reads loadSendContextsPG's rows into out: each send's context is its context's, read on
// the row of the context's first send, with its own recipient's contact and conversation.
func (a *sendReadArgs) scan(rows pgx.Rows, keys []SendContextKey, out []*SendContext) error {
	bases := make([]*SendContext, len(a.projects))
	rs := make([]sendContextRow, 0, len(keys))
	for rows.Next() {
		if len(rs) == len(keys) {
			return fmt.Errorf("store: load send contexts: more than %d rows", len(keys))
		}
		rs = rs[:len(rs)+1]
		r := &rs[len(rs)-1]
		if err := rows.Scan(append(r.dest(), &r.c)...); err != nil {
			return err
		}
		if r.n < 1 || int(r.n) > len(keys) || a.of[r.n-1] != r.c {
			return fmt.Errorf("store: load send contexts: row %d of %d", r.n, len(keys))
		}
		if a.first[r.n-1] {
			bases[r.c-1] = r.base()
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range rs {
		r := &rs[i]
		base := bases[a.of[r.n-1]-1]
		if base == nil {
			return fmt.Errorf("store: load send contexts: no row for the context of send %d", r.n)
		}
		sc := *base
		sc.Known = r.known(keys[r.n-1].Recipient, base.Sender)
		out[r.n-1] = &sc
	}
	return nil
}

// loadSendContextSQLite is LoadSendContext's query for one send on SQLite, with the columns of
// loadSendContextsPG; its parameters are the active campaign status, the sender reference three
// times, the recipient, the account and the project.
var loadSendContextSQLite = `SELECT 0, a.archived_at IS NOT NULL, a.quiet_hours, a.quiet_hours_start, a.quiet_hours_end, a.time_zone,
	pn.id, pn.project_id, pn.account_id, pn.number, pn.type, pn.country, pn.name, pn.metadata, pn.carrier, pn.campaign_id,
	pn.attachment_status, pn.created_at, pn.updated_at,
	(SELECT c.status FROM campaigns c WHERE c.id = pn.campaign_id),
	(SELECT COUNT(*) FROM toll_free_campaigns t WHERE t.phone_number_id = pn.id AND t.status = ?),
	` + colsOf("k", contactCols) + `, cv.id, cv.created_at
	FROM accounts a LEFT JOIN phone_numbers pn ON pn.account_id = a.id AND pn.project_id = a.project_id
		AND pn.released_at IS NULL AND (? = '' OR pn.id = ? OR pn.number = ?)
	LEFT JOIN contacts k ON k.account_id = a.id AND k.phone_number = ?
	LEFT JOIN conversations cv ON cv.contact_id = k.id AND cv.phone_number_id = pn.id
	WHERE a.id = ? AND a.project_id = ? ORDER BY pn.id LIMIT 1`

// loadSendContextsSQLite reads the sends' contexts with one prepared statement: SQLite parses a
// statement on every use otherwise, which cost more than running it.
func (s *Store) loadSendContextsSQLite(ctx context.Context, keys []SendContextKey) ([]*SendContext, []error, error) {
	out, errs := make([]*SendContext, len(keys)), make([]error, len(keys))
	db, ok := s.db.Statement.ConnPool.(*sql.DB)
	if !ok {
		return nil, nil, errors.New("store: load send contexts: no connection pool")
	}
	stmt, err := db.PrepareContext(ctx, loadSendContextSQLite)
	if err != nil {
		return nil, nil, translate(err, "load send contexts")
	}
	defer stmt.Close()
	for i, k := range keys {
		var r sendContextRow
		err := stmt.QueryRowContext(ctx, CampaignActive, k.Ref, k.Ref, k.Ref, k.Recipient, k.AccountID, k.ProjectID).Scan(r.dest()...)
		if errors.Is(err, sql.ErrNoRows) {
			errs[i] = fmt.Errorf("load send context of account %s: %w", k.AccountID, ErrNotFound)
			continue
		}
		if err != nil {
			return nil, nil, translate(err, "load send contexts")
		}
		out[i] = r.context(k.Recipient)
	}
	return out, errs, nil
}

// sendContextRow is a row of loadSendContextsPG.
type sendContextRow struct {
	n                               int64
	c                               int32 // loadSendContextsPG's context of the send
	archived, quietHours            bool
	quietStart, quietEnd            int32
	timeZone                        *string
	id, project, number, typ        *string
	country, carrier                *string
	account, name, campaign, att    *string
	metadata                        Metadata
	created, updated                *time.Time
	campaignStatus                  *string
	tollFree                        int64
	kID, kProject, kAccount, kPhone *string
	kEmail, kFirst, kLast           *string
	kMetadata                       Metadata
	kDisabled, kOptedOut            *bool
	kCreated, kUpdated              *time.Time
	convID                          *string
	convCreated                     *time.Time
}

func (r *sendContextRow) dest() []any {
	return append(make([]any, 0, 36), &r.n, &r.archived, &r.quietHours, &r.quietStart, &r.quietEnd, &r.timeZone,
		&r.id, &r.project, &r.account, &r.number, &r.typ, &r.country, &r.name, &r.metadata, &r.carrier, &r.campaign,
		&r.att, &r.created, &r.updated, &r.campaignStatus, &r.tollFree,
		&r.kID, &r.kProject, &r.kAccount, &r.kPhone, &r.kEmail, &r.kFirst, &r.kLast, &r.kMetadata, &r.kDisabled, &r.kOptedOut,
		&r.kCreated, &r.kUpdated, &r.convID, &r.convCreated)
}

// context builds what LoadSendContext returns from the row.
func (r *sendContextRow) context(recipient string) *SendContext {
	out := r.base()
	out.Known = r.known(recipient, out.Sender)
	return out
}

// base is the row's context of an account and a sender, without the recipient's pair.
func (r *sendContextRow) base() *SendContext {
	out := &SendContext{Archived: r.archived, QuietHours: r.quietHours, QuietHoursStart: int(r.quietStart),
		QuietHoursEnd: int(r.quietEnd), TimeZone: r.timeZone}
	if r.id == nil {
		return out
	}
	out.Sender = &Sender{PhoneNumber: PhoneNumber{ID: *r.id, ProjectID: deref(r.project), AccountID: r.account,
		Number: deref(r.number), Type: deref(r.typ), Country: deref(r.country), Name: r.name, Metadata: r.metadata,
		Carrier: deref(r.carrier), CampaignID: r.campaign, AttachmentStatus: r.att,
		CreatedAt: utcOrZero(r.created), UpdatedAt: utcOrZero(r.updated)},
		CampaignStatus: r.campaignStatus, TollFreeActive: int(r.tollFree)}
	return out
}

// known is what the row found of the recipient's pair with sender: nil without a sender or a
// recipient.
func (r *sendContextRow) known(recipient string, sender *Sender) *Pair {
	if sender == nil || recipient == "" {
		return nil
	}
	known := &Pair{}
	if r.kID == nil {
		return known
	}
	c := Contact{ID: *r.kID, ProjectID: deref(r.kProject), AccountID: deref(r.kAccount), PhoneNumber: deref(r.kPhone),
		Email: r.kEmail, FirstName: r.kFirst, LastName: r.kLast, Metadata: r.kMetadata,
		OutboundDisabled: r.kDisabled != nil && *r.kDisabled, OptedOut: r.kOptedOut != nil && *r.kOptedOut,
		CreatedAt: utcOrZero(r.kCreated), UpdatedAt: utcOrZero(r.kUpdated)}
	known.Contact = &c
	if r.convID != nil {
		known.Conversation = &Conversation{ID: *r.convID, ProjectID: c.ProjectID, AccountID: c.AccountID,
			PhoneNumberID: sender.ID, ContactID: c.ID, CreatedAt: utcOrZero(r.convCreated)}
	}
	return known
}

// deref is *p, or T's zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// utcOrZero is *t in UTC, or the zero time when t is nil.
func utcOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// OutboundSend is one send of InsertOutboundBatch: an outbound message without attachments and,
// when the account had no contact for its recipient, the contact, conversation and
// conversation.created event to create with it (the message names them already).
type OutboundSend struct {
	Message *Message
	// New is nil when the message's contact and conversation exist.
	New *NewPair
}

// InsertOutboundBatch writes sends together: on PostgreSQL in one statement (their new contacts,
// conversations, conversation.created events with their webhook deliveries, messages and queue
// rows), on SQLite in one transaction. It reports for each send whether it was written: a send
// with a new pair is not when the account's contact with its recipient exists by then (a
// concurrent send or import made it, or an earlier send of the batch to the same recipient), and
// then nothing of it is written; the caller writes it another way. Call it outside any
// transaction and without an idempotency claim (sends with one are not batched).
func (s *Store) InsertOutboundBatch(ctx context.Context, sends []OutboundSend) ([]bool, error) {
	if s.inTx() || claimOf(ctx) != nil {
		return nil, errors.New("store: InsertOutboundBatch runs outside transactions and idempotency claims")
	}
	for _, o := range sends {
		if o.Message.Metadata == nil {
			o.Message.Metadata = Metadata{}
		}
		if o.New != nil && o.New.Contact.Metadata == nil {
			o.New.Contact.Metadata = Metadata{}
		}
	}
	if s.dialect == Postgres {
		return s.insertOutboundBatchPG(ctx, sends)
	}
	var written []bool
	err := s.Tx(ctx, func(tx *Store) (err error) {
		written, err = tx.insertOutboundBatchSQLite(ctx, sends)
		return err
	})
	if err != nil {
		return nil, err
	}
	return written, nil
}

// insertOutboundBatchSQLite is InsertOutboundBatch inside a transaction on SQLite: one
// multi-row statement per table (SQLite parses each statement it runs; gorm's Create reflects on
// every row).
func (s *Store) insertOutboundBatchSQLite(ctx context.Context, sends []OutboundSend) ([]bool, error) {
	written := make([]bool, len(sends))
	tx := sqlTx(s.db)
	var contacts [][]any
	for _, o := range sends {
		if c := o.New; c != nil {
			k := &c.Contact
			contacts = append(contacts, []any{k.ID, k.ProjectID, k.AccountID, k.PhoneNumber, k.Email, k.FirstName, k.LastName,
				k.Metadata, k.OutboundDisabled, false, k.CreatedAt, k.UpdatedAt})
		}
	}
	made := map[string]bool{}
	if len(contacts) > 0 {
		q, args := insertRows("contacts", contactCols, contacts)
		rows, err := tx.QueryContext(ctx, q+" ON CONFLICT (account_id, phone_number) DO NOTHING RETURNING id", args...)
		if err != nil {
			return nil, translate(err, "create contacts")
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, translate(err, "create contacts")
			}
			made[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, translate(err, "create contacts")
		}
	}
	var convs, msgs [][]any
	var queued []Message
	var evs []Event
	for i, o := range sends {
		if np := o.New; np != nil {
			if !made[np.Contact.ID] {
				continue
			}
			cv := &np.Conversation
			convs = append(convs, []any{cv.ID, cv.ProjectID, cv.AccountID, cv.PhoneNumberID, cv.ContactID, cv.CreatedAt})
			evs = append(evs, np.Event)
		}
		written[i] = true
		m := o.Message
		msgs = append(msgs, []any{m.ID, m.ProjectID, m.AccountID, m.ConversationID, m.PhoneNumberID, m.SenderType, m.ContactID,
			DirectionOutbound, m.Status, m.Body, m.Metadata, m.Encoding, m.Segments, m.Type, m.FromNumber, m.ToNumber, m.Carrier, false,
			m.Traceparent, m.CreatedAt, m.UpdatedAt, m.SendAt})
		queued = append(queued, *m)
	}
	for _, t := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{{"conversations", conversationCols, convs}, {"messages", outboundCols, msgs}} {
		if len(t.rows) == 0 {
			continue
		}
		q, args := insertRows(t.table, t.cols, t.rows)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return nil, translate(err, "insert "+t.table)
		}
	}
	if err := s.enqueueOutbound(ctx, queued); err != nil {
		return nil, err
	}
	return written, s.InsertEvents(ctx, evs)
}

// Columns of the rows insertOutboundBatchSQLite writes.
var (
	conversationCols = []string{"id", "project_id", "account_id", "phone_number_id", "contact_id", "created_at"}
	outboundCols     = []string{"id", "project_id", "account_id", "conversation_id", "phone_number_id", "sender_type", "contact_id",
		"direction", "status", "body", "metadata", "encoding", "segments", "type", "from_number", "to_number", "carrier", "auto_reply",
		"traceparent", "created_at", "updated_at", "send_at"}
)

// insertRows renders a multi-row INSERT of rows (one value per column) and its arguments.
func insertRows(table string, cols []string, rows [][]any) (string, []any) {
	var sb strings.Builder
	args := make([]any, 0, len(rows)*len(cols))
	sb.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(one)
		args = append(args, r...)
	}
	return sb.String(), args
}

// insertOutboundBatchPG is InsertOutboundBatch's one statement, in two forms. i unnests the sends,
// c inserts the new contacts, cv the new conversations, m and mq the messages and queue rows, and
// eventsFanout the conversation.created events of the new conversations; it returns the ids of the
// messages written.
//
// The plain form (insertOutboundBatchPlainPG) writes every send: a new contact that exists by
// then (a concurrent send or import made it, or an earlier send of the batch to the same
// recipient) fails the whole statement on contacts_account_phone, which writes nothing, and the
// batch then runs the careful form (insertOutboundBatchCarefulPG): c skips such contacts
// (ON CONFLICT DO NOTHING), cv makes the conversations of the contacts c made, and ok keeps the
// sends of an existing pair and those whose conversation cv made. The careful form costs more for
// every row (a speculative insertion: a check of the unique index before the insert, a lock and
// a WAL record to confirm it after; BenchmarkInsertOutboundBatch) and it is needed only when a
// send races another to a new recipient.
func insertOutboundBatchPG(careful bool) string {
	q := `WITH i AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
		$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[], $14::text[], $15::text[],
		$16::text[], $17::text[], $18::timestamptz[], $19::timestamptz[], $20::timestamptz[], $21::timestamptz[], $22::bool[],
		$23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::bool[])
		AS i(id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id, status, body, metadata,
			encoding, segments, type, from_number, to_number, carrier, traceparent, created_at, updated_at, send_at, due_at,
			fresh, c_phone, c_email, c_first_name, c_last_name, c_metadata, c_outbound_disabled)),
	c AS (INSERT INTO contacts (id, project_id, account_id, phone_number, email, first_name, last_name, metadata,
			outbound_disabled, opted_out, created_at, updated_at)
		SELECT contact_id, project_id, account_id, c_phone, c_email, c_first_name, c_last_name, c_metadata, c_outbound_disabled,
			FALSE, created_at, created_at FROM i WHERE fresh`
	if careful {
		q += `
		ON CONFLICT (account_id, phone_number) DO NOTHING RETURNING id),
	cv AS (INSERT INTO conversations (id, project_id, account_id, phone_number_id, contact_id, created_at)
		SELECT i.conversation_id, i.project_id, i.account_id, i.phone_number_id, i.contact_id, i.created_at
		FROM i JOIN c ON c.id = i.contact_id WHERE i.fresh RETURNING id),
	ok AS (SELECT * FROM i WHERE NOT fresh OR conversation_id IN (SELECT id FROM cv)),`
	} else {
		q += `),
	cv AS (INSERT INTO conversations (id, project_id, account_id, phone_number_id, contact_id, created_at)
		SELECT conversation_id, project_id, account_id, phone_number_id, contact_id, created_at FROM i WHERE fresh),
	ok AS (SELECT * FROM i),`
	}
	return q + `
	m AS (INSERT INTO messages (id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id,
			direction, status, body, metadata, encoding, segments, type, from_number, to_number, carrier, auto_reply,
			traceparent, created_at, updated_at, send_at)
		SELECT id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id, 'outbound', status, body,
			metadata, encoding, segments, type, from_number, to_number, carrier, FALSE, traceparent, created_at, updated_at, send_at
		FROM ok RETURNING id),
	mq AS (INSERT INTO outbound_queue (message_id, due_at) SELECT id, due_at FROM ok),
	`
}

// The two forms of insertOutboundBatchPG.
var (
	insertOutboundBatchPlainPG   = insertOutboundBatchPG(false)
	insertOutboundBatchCarefulPG = insertOutboundBatchPG(true)
)

// insertOutboundBatchArgs is the number of parameters of insertOutboundBatchPG before the
// events'.
const insertOutboundBatchArgs = 28

func (s *Store) insertOutboundBatchPG(ctx context.Context, sends []OutboundSend) ([]bool, error) {
	n := len(sends)
	base, evs, err := outboundBatchArgs(sends)
	if err != nil {
		return nil, err
	}
	at := now()
	prepareEvents(ctx, evs, at)
	careful := false
	for slots := 0; slots < len(deliverySlots); {
		ea := newEventArrays(evs, deliverySlots[slots])
		q := insertOutboundBatchPlainPG + eventsFanout(insertOutboundBatchArgs+1, deliverySlots[slots], "")
		if careful {
			q = insertOutboundBatchCarefulPG + eventsFanout(insertOutboundBatchArgs+1, deliverySlots[slots], "WHERE ev.subject IN (SELECT id FROM cv)")
		}
		q += `SELECT ARRAY(SELECT id FROM m), ` + eventsGuard[len("SELECT "):]
		var made []string
		var deliveries int64
		err := s.pgxConn(ctx, func(c *pgx.Conn) error {
			return c.QueryRow(ctx, q, append(append([]any(nil), base...), ea.args(at)...)...).Scan(&made, &deliveries)
		})
		if isDivisionByZero(err) {
			slots++
			continue
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "contacts_account_phone" && !careful {
			careful = true
			continue
		}
		if err != nil {
			return nil, translate(err, "insert messages")
		}
		written := make([]bool, n)
		in := make(map[string]bool, len(made))
		for _, id := range made {
			in[id] = true
		}
		k := 0
		for i, o := range sends {
			written[i] = in[o.Message.ID]
			if o.New != nil {
				if written[i] {
					o.New.Event = evs[k]
				}
				k++
			}
		}
		if len(made) > 0 {
			s.wake(WakeOutbound)
		}
		if deliveries > 0 {
			s.wake(WakeWebhooks)
		}
		return written, nil
	}
	return nil, errors.New("store: insert messages: a project has more than 128 webhook endpoints for one event type")
}

// outboundBatchArgs returns insertOutboundBatchPG's parameters before the events' for sends, and
// the conversation.created events of their new pairs, in order.
func outboundBatchArgs(sends []OutboundSend) (base []any, evs []Event, err error) {
	n := len(sends)
	var (
		ids, projects, accounts, convs, numbers, senderTypes, contacts = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		statuses, metadata, encodings, types, froms, tos, carriers     = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		bodies, tps, cEmails, cFirst, cLast                            = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		cPhones, cMetadata                                             = make([]string, n), make([]string, n)
		segments                                                       = make([]int32, n)
		created, updated, due                                          = make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
		sendAt                                                         = make([]*time.Time, n)
		fresh, cDisabled                                               = make([]bool, n), make([]bool, n)
	)
	for i, o := range sends {
		m := o.Message
		md, err := m.Metadata.Value()
		if err != nil {
			return nil, nil, err
		}
		ids[i], projects[i], accounts[i], convs[i], numbers[i], senderTypes[i], contacts[i] = m.ID, m.ProjectID, m.AccountID,
			m.ConversationID, m.PhoneNumberID, m.SenderType, m.ContactID
		statuses[i], metadata[i], encodings[i], types[i], froms[i], tos[i], carriers[i] = m.Status, md.(string), m.Encoding, m.Type,
			m.FromNumber, m.ToNumber, m.Carrier
		bodies[i], tps[i], segments[i] = m.Body, m.Traceparent, int32(m.Segments)
		created[i], updated[i], due[i] = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), queuedSince(m).UTC()
		if m.SendAt != nil {
			t := m.SendAt.UTC()
			sendAt[i] = &t
		}
		if np := o.New; np != nil {
			c := &np.Contact
			cmd, err := c.Metadata.Value()
			if err != nil {
				return nil, nil, err
			}
			fresh[i], cPhones[i], cEmails[i], cFirst[i], cLast[i], cMetadata[i], cDisabled[i] = true, c.PhoneNumber, c.Email,
				c.FirstName, c.LastName, cmd.(string), c.OutboundDisabled
			ev := np.Event
			ev.subject = np.Conversation.ID
			evs = append(evs, ev)
		}
	}
	base = []any{ids, projects, accounts, convs, numbers, senderTypes, contacts, statuses, bodies, metadata, encodings, segments,
		types, froms, tos, carriers, tps, created, updated, sendAt, due, fresh, cPhones, cEmails, cFirst, cLast, cMetadata, cDisabled}
	return base, evs, nil
}
