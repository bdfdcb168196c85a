package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The sends of plain contexts, written without a read first (PostgreSQL only). The group commit
// of sends (service/send_batch.go) read each batch's contexts (LoadSendContexts), then wrote the
// batch (InsertOutboundBatch): two statements and two round trips a flush, the read's about 1.7
// of a flush's 5.5 ms under load. Most sends come from a context that needs nothing special,
// which the service keeps from an earlier read; InsertOutboundPlain writes such sends at once and
// checks, in its own statement, everything the read would have told: a send whose context is no
// longer as kept, or whose recipient's pair needs more than the message, is not written, and the
// caller sends it the way that reads first. The check reads committed data at the statement's
// start, later than a read before the write would, so a change another instance made (an account
// archived, a number released, a campaign ended) takes effect no later than it did.

// PlainContext is a send's context that needs nothing special, as a read found it: the project's
// account exists, is not archived and keeps no quiet hours, and its sender reference (Ref, as in
// SendContextKey) names Sender, a number that may send (a local number attached to an active
// campaign, a toll-free number with an active toll-free campaign, or a number of another type).
type PlainContext struct {
	ProjectID, AccountID, Ref string
	Sender                    PhoneNumber
}

// PlainSend is a send of InsertOutboundPlain: its message, which names New's contact and
// conversation, New (the pair to create should the recipient be new to the account, with its
// conversation.created event), and its context (an index into InsertOutboundPlain's contexts).
type PlainSend struct {
	Message *Message
	New     *NewPair
	Context int
}

// PlainResult is what InsertOutboundPlain did with a send.
type PlainResult struct {
	// Written is true when the send was written.
	Written bool
	// Known is the recipient's contact and conversation with the sender when they existed and the
	// message went to them (the send's Message names them then), nil when the send created New's
	// or was not written.
	Known *Pair
}

// InsertOutboundPlain writes sends of plain contexts in one statement, as InsertOutboundBatch
// writes those of contexts it was given, after checking in that statement that each context is
// still as contexts has it (held reports which were). A send is written when its context held and
// its recipient is new to the account (its pair New is created, with the conversation.created
// event), or has a contact who may be sent to and a conversation with the sender (the message goes
// to them). The others are not written, nor anything of them: a send of a context that did not
// hold, a contact who opted out or whose outbound messaging is disabled, a contact without a
// conversation with the sender; and every send when a new contact was made by someone else while
// the statement ran. Give each new recipient of an account one send at most. Call it outside any
// transaction and without an idempotency claim, on PostgreSQL.
func (s *Store) InsertOutboundPlain(ctx context.Context, contexts []PlainContext, sends []PlainSend) (res []PlainResult, held []bool, err error) {
	if s.dialect != Postgres || s.inTx() || claimOf(ctx) != nil {
		return nil, nil, errors.New("store: InsertOutboundPlain runs on PostgreSQL outside transactions and idempotency claims")
	}
	res, held = make([]PlainResult, len(sends)), make([]bool, len(contexts))
	outbound := make([]OutboundSend, len(sends))
	of := make([]int32, len(sends))
	for i, p := range sends {
		if p.Message.Metadata == nil {
			p.Message.Metadata = Metadata{}
		}
		if p.New.Contact.Metadata == nil {
			p.New.Contact.Metadata = Metadata{}
		}
		outbound[i], of[i] = OutboundSend{Message: p.Message, New: p.New}, int32(p.Context+1)
	}
	base, evs, err := outboundBatchArgs(outbound)
	if err != nil {
		return nil, nil, err
	}
	cargs, err := plainContextArgs(contexts)
	if err != nil {
		return nil, nil, err
	}
	base = append(append(base, of), cargs...)
	at := now()
	prepareEvents(ctx, evs, at)
	for _, slots := range deliverySlots {
		q := insertOutboundPlainPG + eventsFanout(insertOutboundPlainArgs+1, slots, "WHERE ev.subject IN (SELECT id FROM cv)") +
			insertOutboundPlainEnd
		args := append(append([]any(nil), base...), newEventArrays(evs, slots).args(at)...)
		var made int64
		var kept []int64
		var rs []sendContextRow // a row per send written
		// The statement's generic plan, made once per connection, as the read's
		// (LoadSendContexts): PostgreSQL otherwise planned it afresh at every run (its custom
		// plans looked cheaper than the generic one), 1.3 ms of planning a call in an e2e run.
		// The setting is the statement's alone: the three are one implicit transaction.
		err := s.pgxConn(ctx, func(c *pgx.Conn) error {
			b := &pgx.Batch{}
			b.Queue("SET plan_cache_mode = force_generic_plan")
			b.Queue(q, args...).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var r sendContextRow
					var m *int64
					var h []int64
					if err := rows.Scan(&r.n, &r.kID, &r.kProject, &r.kAccount, &r.kPhone, &r.kEmail, &r.kFirst, &r.kLast,
						&r.kMetadata, &r.kDisabled, &r.kOptedOut, &r.kCreated, &r.kUpdated, &r.convID, &r.convCreated, &m, &h); err != nil {
						return err
					}
					if r.n == 0 {
						made, kept = deref(m), h
						continue
					}
					if r.n < 1 || int(r.n) > len(sends) {
						return errors.New("store: insert plain sends: a row of no send")
					}
					rs = append(rs, r)
				}
				return rows.Err()
			})
			b.Queue("RESET plan_cache_mode")
			return c.SendBatch(ctx, b).Close()
		})
		if isDivisionByZero(err) {
			continue
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "contacts_account_phone" {
			for i := range held {
				held[i] = true
			}
			return make([]PlainResult, len(sends)), held, nil
		}
		if err != nil {
			return nil, nil, translate(err, "insert messages")
		}
		for _, c := range kept {
			if c >= 1 && int(c) <= len(held) {
				held[c-1] = true
			}
		}
		for i := range rs {
			r := &rs[i]
			p, out := sends[r.n-1], &res[r.n-1]
			out.Written = true
			if r.kID != nil {
				out.Known = r.known(p.Message.ToNumber, &Sender{PhoneNumber: contexts[p.Context].Sender})
				p.Message.ContactID, p.Message.ConversationID = *r.kID, deref(r.convID)
			} else {
				p.New.Event = evs[r.n-1] // every send has its pair's event, in order
			}
		}
		written := len(rs) > 0
		if written {
			s.wake(WakeOutbound)
		}
		if made > 0 {
			s.wake(WakeWebhooks)
		}
		return res, held, nil
	}
	return nil, nil, errors.New("store: insert messages: a project has more than 128 webhook endpoints for one event type")
}

// plainContextArgs are insertOutboundPlainPG's parameters of contexts ($30-$39).
func plainContextArgs(contexts []PlainContext) ([]any, error) {
	n := len(contexts)
	projects, accounts, refs, ids, numbers, types, carriers, metadata := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	names := make([]*string, n)
	updated := make([]time.Time, n)
	for i, c := range contexts {
		pn := &c.Sender
		projects[i], accounts[i], refs[i], ids[i], numbers[i], types[i], carriers[i] = c.ProjectID, c.AccountID, c.Ref, pn.ID,
			pn.Number, pn.Type, pn.Carrier
		names[i], updated[i] = pn.Name, pn.UpdatedAt.UTC()
		md, err := pn.Metadata.Value()
		if err != nil {
			return nil, err
		}
		metadata[i] = md.(string)
	}
	return []any{projects, accounts, refs, ids, numbers, types, names, carriers, updated, metadata}, nil
}

// insertOutboundPlainArgs is the number of parameters of insertOutboundPlainPG before the events'.
const insertOutboundPlainArgs = insertOutboundBatchArgs + 11

// insertOutboundPlainPG is InsertOutboundPlain's statement up to its events (eventsFanout, whose
// events are those of the conversations cv makes) and insertOutboundPlainEnd. i unnests the sends
// as insertOutboundBatchPG's i does, with each one's context ($29, from 1) and position (n); x
// keeps the contexts ($30-$39) that still hold, each checked as LoadSendContexts reads it (the
// account by project, not archived, without quiet hours; its sender reference's number the same
// one, with the same number, type, name, carrier and metadata (the text Metadata.Value writes;
// metadata written otherwise fails the check, and its context is read at every flush) and not
// updated since; the number allowed to send as the service's sender check, Messages.sender, has
// it);
// j keeps the sends of those contexts whose recipient is new to the account, or has a contact
// who may be sent to and a conversation with the sender (with them: k_*, cv_id); c and cv create
// the new pairs, m and mq write the messages and their queue rows.
var insertOutboundPlainPG = func() string {
	known := make([]string, len(contactCols))
	for i, c := range contactCols {
		known[i] = "k." + c + " AS k_" + c
	}
	return `WITH i AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
		$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[], $14::text[], $15::text[],
		$16::text[], $17::text[], $18::timestamptz[], $19::timestamptz[], $20::timestamptz[], $21::timestamptz[], $22::bool[],
		$23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::bool[], $29::int[]) WITH ORDINALITY
		AS i(id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id, status, body, metadata,
			encoding, segments, type, from_number, to_number, carrier, traceparent, created_at, updated_at, send_at, due_at,
			fresh, c_phone, c_email, c_first_name, c_last_name, c_metadata, c_outbound_disabled, c, n)),
	x AS (SELECT s.n FROM unnest($30::text[], $31::text[], $32::text[], $33::text[], $34::text[], $35::text[], $36::text[],
			$37::text[], $38::timestamptz[], $39::text[])
			WITH ORDINALITY AS s(project_id, account_id, ref, pn_id, number, type, name, carrier, updated_at, metadata, n)
		JOIN LATERAL (SELECT a.id, a.project_id FROM accounts a WHERE a.id = s.account_id AND a.project_id = s.project_id
			AND a.archived_at IS NULL AND NOT a.quiet_hours LIMIT 1) a ON TRUE
		JOIN LATERAL (SELECT * FROM phone_numbers pn WHERE pn.account_id = a.id AND pn.project_id = a.project_id
			AND pn.released_at IS NULL AND (s.ref = '' OR pn.id = s.ref OR pn.number = s.ref) ORDER BY pn.id LIMIT 1) pn ON pn.id = s.pn_id
		WHERE pn.number = s.number AND pn.type = s.type AND pn.name IS NOT DISTINCT FROM s.name
			AND pn.carrier = s.carrier AND pn.metadata = s.metadata AND pn.updated_at = s.updated_at
			AND (pn.type <> '` + NumberLocal + `' OR pn.attachment_status = '` + AttachmentDone + `'
				AND (SELECT c.status FROM campaigns c WHERE c.id = pn.campaign_id) = '` + CampaignActive + `')
			AND (pn.type <> '` + NumberTollFree + `'
				OR (SELECT COUNT(*) FROM toll_free_campaigns t WHERE t.phone_number_id = pn.id AND t.status = '` + CampaignActive + `') > 0)),
	j AS (SELECT i.*, ` + strings.Join(known, ", ") + `, cv.id AS cv_id, cv.created_at AS cv_created_at
		FROM i JOIN x ON x.n = i.c
		LEFT JOIN LATERAL (SELECT * FROM contacts k WHERE k.account_id = i.account_id AND k.phone_number = i.to_number LIMIT 1) k ON TRUE
		LEFT JOIN LATERAL (SELECT cv.id, cv.created_at FROM conversations cv WHERE cv.contact_id = k.id
			AND cv.phone_number_id = i.phone_number_id LIMIT 1) cv ON TRUE
		WHERE k.id IS NULL OR (cv.id IS NOT NULL AND NOT k.opted_out AND NOT k.outbound_disabled)),
	c AS (INSERT INTO contacts (id, project_id, account_id, phone_number, email, first_name, last_name, metadata,
			outbound_disabled, opted_out, created_at, updated_at)
		SELECT contact_id, project_id, account_id, c_phone, c_email, c_first_name, c_last_name, c_metadata, c_outbound_disabled,
			FALSE, created_at, created_at FROM j WHERE k_id IS NULL),
	cv AS (INSERT INTO conversations (id, project_id, account_id, phone_number_id, contact_id, created_at)
		SELECT conversation_id, project_id, account_id, phone_number_id, contact_id, created_at FROM j WHERE k_id IS NULL RETURNING id),
	m AS (INSERT INTO messages (id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id,
			direction, status, body, metadata, encoding, segments, type, from_number, to_number, carrier, auto_reply,
			traceparent, created_at, updated_at, send_at)
		SELECT id, project_id, account_id, COALESCE(cv_id, conversation_id), phone_number_id, sender_type, COALESCE(k_id, contact_id),
			'outbound', status, body, metadata, encoding, segments, type, from_number, to_number, carrier, FALSE, traceparent,
			created_at, updated_at, send_at
		FROM j),
	mq AS (INSERT INTO outbound_queue (message_id, due_at) SELECT id, due_at FROM j),
	`
}()

// insertOutboundPlainEnd ends insertOutboundPlainPG: a row per send written (its position, and
// its recipient's contact and conversation when they existed), then one of position 0 with
// eventsGuard's count of deliveries and the contexts that held.
var insertOutboundPlainEnd = `SELECT j.n, ` + func() string {
	cols := make([]string, len(contactCols))
	for i, c := range contactCols {
		cols[i] = "j.k_" + c
	}
	return strings.Join(cols, ", ")
}() + `, j.cv_id, j.cv_created_at, NULL::bigint, NULL::bigint[] FROM j
	UNION ALL SELECT 0, ` + strings.Repeat("NULL, ", len(contactCols)+2) + `(` + eventsGuard[len("SELECT "):] + `)::bigint,
		ARRAY(SELECT n FROM x)`
