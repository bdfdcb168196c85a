package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
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
	if s.dialect != Postgres || s.inTx() {
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
	projects, accounts, refs, recipients := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		projects[i], accounts[i], refs[i], recipients[i] = k.ProjectID, k.AccountID, k.Ref, k.Recipient
	}
	err = s.pgxConn(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, loadSendContextsPG, projects, accounts, refs, recipients, CampaignActive)
		if err != nil {
			return err
		}
		defer rows.Close()
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

// loadSendContextsPG is LoadSendContext's query for each row of the arrays $1-$4 (projects,
// accounts, sender references, recipients; $5 is the active campaign status): one row per send
// whose account exists, numbered by its position from 1.
var loadSendContextsPG = `SELECT i.n, a.archived_at IS NOT NULL, a.quiet_hours, a.quiet_hours_start, a.quiet_hours_end, a.time_zone,
	pn.id, pn.project_id, pn.account_id, pn.number, pn.type, pn.country, pn.name, pn.metadata, pn.carrier, pn.campaign_id,
	pn.attachment_status, pn.created_at, pn.updated_at,
	(SELECT c.status FROM campaigns c WHERE c.id = pn.campaign_id),
	(SELECT COUNT(*) FROM toll_free_campaigns t WHERE t.phone_number_id = pn.id AND t.status = $5),
	` + colsOf("k", contactCols) + `, cv.id, cv.created_at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS i(project_id, account_id, ref, recipient, n)
	JOIN LATERAL (SELECT * FROM accounts a WHERE a.id = i.account_id AND a.project_id = i.project_id LIMIT 1) a ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM phone_numbers pn WHERE pn.account_id = a.id AND pn.project_id = a.project_id
		AND pn.released_at IS NULL AND (i.ref = '' OR pn.id = i.ref OR pn.number = i.ref) ORDER BY pn.id LIMIT 1) pn ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM contacts k WHERE k.account_id = a.id AND k.phone_number = i.recipient LIMIT 1) k ON TRUE
	LEFT JOIN LATERAL (SELECT * FROM conversations cv WHERE cv.contact_id = k.id AND cv.phone_number_id = pn.id LIMIT 1) cv ON TRUE`

// sendContextRow is a row of loadSendContextsPG.
type sendContextRow struct {
	n                               int64
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
	return []any{&r.n, &r.archived, &r.quietHours, &r.quietStart, &r.quietEnd, &r.timeZone,
		&r.id, &r.project, &r.account, &r.number, &r.typ, &r.country, &r.name, &r.metadata, &r.carrier, &r.campaign,
		&r.att, &r.created, &r.updated, &r.campaignStatus, &r.tollFree,
		&r.kID, &r.kProject, &r.kAccount, &r.kPhone, &r.kEmail, &r.kFirst, &r.kLast, &r.kMetadata, &r.kDisabled, &r.kOptedOut,
		&r.kCreated, &r.kUpdated, &r.convID, &r.convCreated}
}

// context builds what LoadSendContext returns from the row.
func (r *sendContextRow) context(recipient string) *SendContext {
	out := &SendContext{Archived: r.archived, QuietHours: r.quietHours, QuietHoursStart: int(r.quietStart),
		QuietHoursEnd: int(r.quietEnd), TimeZone: r.timeZone}
	if r.id == nil {
		return out
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	utc := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return t.UTC()
	}
	if recipient != "" {
		out.Known = &Pair{}
		if r.kID != nil {
			c := Contact{ID: *r.kID, ProjectID: deref(r.kProject), AccountID: deref(r.kAccount), PhoneNumber: deref(r.kPhone),
				Email: r.kEmail, FirstName: r.kFirst, LastName: r.kLast, Metadata: r.kMetadata,
				OutboundDisabled: r.kDisabled != nil && *r.kDisabled, OptedOut: r.kOptedOut != nil && *r.kOptedOut,
				CreatedAt: utc(r.kCreated), UpdatedAt: utc(r.kUpdated)}
			out.Known.Contact = &c
			if r.convID != nil {
				out.Known.Conversation = &Conversation{ID: *r.convID, ProjectID: c.ProjectID, AccountID: c.AccountID,
					PhoneNumberID: *r.id, ContactID: c.ID, CreatedAt: utc(r.convCreated)}
			}
		}
	}
	out.Sender = &Sender{PhoneNumber: PhoneNumber{ID: *r.id, ProjectID: deref(r.project), AccountID: r.account,
		Number: deref(r.number), Type: deref(r.typ), Country: deref(r.country), Name: r.name, Metadata: r.metadata,
		Carrier: deref(r.carrier), CampaignID: r.campaign, AttachmentStatus: r.att,
		CreatedAt: utc(r.created), UpdatedAt: utc(r.updated)},
		CampaignStatus: r.campaignStatus, TollFreeActive: int(r.tollFree)}
	return out
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
	written := make([]bool, len(sends))
	err := s.Tx(ctx, func(tx *Store) error {
		var msgs []Message
		var cvs []Conversation
		var evs []Event
		for i, o := range sends {
			if np := o.New; np != nil {
				c := &np.Contact
				res := tx.q(ctx).Exec(`INSERT INTO contacts (id, project_id, account_id, phone_number, email, first_name, last_name,
					metadata, outbound_disabled, opted_out, created_at, updated_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE, ?, ?) ON CONFLICT (account_id, phone_number) DO NOTHING`,
					c.ID, c.ProjectID, c.AccountID, c.PhoneNumber, c.Email, c.FirstName, c.LastName, c.Metadata, c.OutboundDisabled,
					c.CreatedAt, c.UpdatedAt)
				if res.Error != nil {
					return translate(res.Error, "create contact")
				}
				if res.RowsAffected != 1 {
					continue
				}
				cvs, evs = append(cvs, np.Conversation), append(evs, np.Event)
			}
			written[i] = true
			msgs = append(msgs, *o.Message)
		}
		if len(cvs) > 0 {
			if err := tx.q(ctx).Create(&cvs).Error; err != nil {
				return translate(err, "create conversations")
			}
		}
		if len(msgs) > 0 {
			if err := tx.q(ctx).Session(&gorm.Session{CreateBatchSize: 200}).Create(&msgs).Error; err != nil {
				return translate(err, "insert messages")
			}
		}
		if err := tx.enqueueOutbound(ctx, msgs); err != nil {
			return err
		}
		return tx.InsertEvents(ctx, evs)
	})
	if err != nil {
		return nil, err
	}
	return written, nil
}

// insertOutboundBatchPG is InsertOutboundBatch's one statement: i unnests the sends, c inserts
// the new contacts (none where one exists by then), cv the new conversations of the contacts c
// made, ok keeps the sends of an existing pair and those whose conversation cv made, m and mq
// insert their messages and queue rows, and eventsFanout the conversation.created events of the
// conversations cv made. It returns the ids of the messages written.
const insertOutboundBatchPG = `WITH i AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
		$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[], $14::text[], $15::text[],
		$16::text[], $17::text[], $18::timestamptz[], $19::timestamptz[], $20::timestamptz[], $21::timestamptz[], $22::bool[],
		$23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::bool[])
		AS i(id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id, status, body, metadata,
			encoding, segments, type, from_number, to_number, carrier, traceparent, created_at, updated_at, send_at, due_at,
			fresh, c_phone, c_email, c_first_name, c_last_name, c_metadata, c_outbound_disabled)),
	c AS (INSERT INTO contacts (id, project_id, account_id, phone_number, email, first_name, last_name, metadata,
			outbound_disabled, opted_out, created_at, updated_at)
		SELECT contact_id, project_id, account_id, c_phone, c_email, c_first_name, c_last_name, c_metadata, c_outbound_disabled,
			FALSE, created_at, created_at FROM i WHERE fresh
		ON CONFLICT (account_id, phone_number) DO NOTHING RETURNING id),
	cv AS (INSERT INTO conversations (id, project_id, account_id, phone_number_id, contact_id, created_at)
		SELECT i.conversation_id, i.project_id, i.account_id, i.phone_number_id, i.contact_id, i.created_at
		FROM i JOIN c ON c.id = i.contact_id WHERE i.fresh RETURNING id),
	ok AS (SELECT * FROM i WHERE NOT fresh OR conversation_id IN (SELECT id FROM cv)),
	m AS (INSERT INTO messages (id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id,
			direction, status, body, metadata, encoding, segments, type, from_number, to_number, carrier, auto_reply,
			traceparent, created_at, updated_at, send_at)
		SELECT id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id, 'outbound', status, body,
			metadata, encoding, segments, type, from_number, to_number, carrier, FALSE, traceparent, created_at, updated_at, send_at
		FROM ok RETURNING id),
	mq AS (INSERT INTO outbound_queue (message_id, due_at) SELECT id, due_at FROM ok),
	`

// insertOutboundBatchArgs is the number of parameters of insertOutboundBatchPG before the
// events'.
const insertOutboundBatchArgs = 28

func (s *Store) insertOutboundBatchPG(ctx context.Context, sends []OutboundSend) ([]bool, error) {
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
		evs                                                            []Event
	)
	for i, o := range sends {
		m := o.Message
		md, err := m.Metadata.Value()
		if err != nil {
			return nil, err
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
				return nil, err
			}
			fresh[i], cPhones[i], cEmails[i], cFirst[i], cLast[i], cMetadata[i], cDisabled[i] = true, c.PhoneNumber, c.Email,
				c.FirstName, c.LastName, cmd.(string), c.OutboundDisabled
			ev := np.Event
			ev.subject = np.Conversation.ID
			evs = append(evs, ev)
		}
	}
	base := []any{ids, projects, accounts, convs, numbers, senderTypes, contacts, statuses, bodies, metadata, encodings, segments,
		types, froms, tos, carriers, tps, created, updated, sendAt, due, fresh, cPhones, cEmails, cFirst, cLast, cMetadata, cDisabled}
	at := now()
	prepareEvents(ctx, evs, at)
	for _, slots := range []int{deliveryIDsPerEvent, 16, 128} {
		ea := newEventArrays(evs, slots)
		q := insertOutboundBatchPG + eventsFanout(insertOutboundBatchArgs+1, slots, "WHERE ev.subject IN (SELECT id FROM cv)") +
			`SELECT ARRAY(SELECT id FROM m), ` + eventsGuard[len("SELECT "):]
		var made []string
		var deliveries int64
		err := s.pgxConn(ctx, func(c *pgx.Conn) error {
			return c.QueryRow(ctx, q, append(append([]any(nil), base...), ea.args(at)...)...).Scan(&made, &deliveries)
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "22012" {
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
