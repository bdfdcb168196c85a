package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The hot paths on PostgreSQL (send, dispatch, receipts, webhook deliveries) speak pgx directly on
// a connection of the store's pool: its arrays (unnest of []string, []time.Time …) in the binary
// format, its batches (several statements in one round trip) and its per-connection statement
// cache, without database/sql's and gorm's layers. gorm stays for the rest.

// pgxConn runs fn on a pgx connection of the pool (a pinned store's own, see Pinned), outside any
// transaction of the caller's.
func (s *Store) pgxConn(ctx context.Context, fn func(c *pgx.Conn) error) error {
	if s.dialect != Postgres {
		return errors.New("store: pgxConn needs PostgreSQL")
	}
	if s.pin != nil {
		return s.pin.run(ctx, fn)
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return translate(err, "connection")
	}
	defer conn.Close()
	return rawPgx(conn, fn)
}

// rawPgx runs fn on the pgx connection under conn.
func rawPgx(conn *sql.Conn, fn func(c *pgx.Conn) error) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: the PostgreSQL driver is not pgx (%T)", dc)
		}
		return fn(sc.Conn())
	})
}

// inTx reports whether the store handle is inside a transaction (Tx).
func (s *Store) inTx() bool { return sqlTx(s.db) != nil }

// pgxTx runs fn in a transaction on a pgx connection: committed when fn returns nil, rolled back
// otherwise.
func (s *Store) pgxTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.pgxConn(ctx, func(c *pgx.Conn) error { return pgx.BeginFunc(ctx, c, fn) })
}

// Column lists of the rows the hot paths read, in the order the scanners below take them.
var (
	messageCols = []string{"id", "project_id", "account_id", "conversation_id", "phone_number_id", "sender_type", "contact_id",
		"direction", "status", "body", "metadata", "encoding", "segments", "type", "from_number", "to_number", "carrier",
		"carrier_id", "blast_id", "auto_reply", "traceparent", "failure_reason", "not_before", "created_at", "updated_at",
		"send_at", "sent_at", "delivered_at", "failed_at", "received_at"}
	contactCols = []string{"id", "project_id", "account_id", "phone_number", "email", "first_name", "last_name", "metadata",
		"outbound_disabled", "opted_out", "created_at", "updated_at"}
	numberCols = []string{"id", "project_id", "account_id", "number", "type", "country", "name", "metadata", "carrier",
		"campaign_id", "attachment_status", "created_at", "updated_at", "released_at"}
)

// colsOf renders alias.col for each column.
func colsOf(alias string, cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = alias + "." + c
	}
	return strings.Join(out, ", ")
}

// appendMessageDest appends the scan destinations of messageCols for m to dest. The hot paths'
// queries scan each row into the same dest, emptied (dest[:0]): pgx takes the destinations only
// while it scans a row, and a row of a message with its contact and number has about 60 of them.
func appendMessageDest(dest []any, m *Message) []any {
	return append(dest, &m.ID, &m.ProjectID, &m.AccountID, &m.ConversationID, &m.PhoneNumberID, &m.SenderType, &m.ContactID,
		&m.Direction, &m.Status, &m.Body, &m.Metadata, &m.Encoding, &m.Segments, &m.Type, &m.FromNumber, &m.ToNumber, &m.Carrier,
		&m.CarrierID, &m.BlastID, &m.AutoReply, &m.Traceparent, &m.FailureReason, &m.NotBefore, &m.CreatedAt, &m.UpdatedAt,
		&m.SendAt, &m.SentAt, &m.DeliveredAt, &m.FailedAt, &m.ReceivedAt)
}

// appendContactDest appends the scan destinations of contactCols for c to dest.
func appendContactDest(dest []any, c *Contact) []any {
	return append(dest, &c.ID, &c.ProjectID, &c.AccountID, &c.PhoneNumber, &c.Email, &c.FirstName, &c.LastName, &c.Metadata,
		&c.OutboundDisabled, &c.OptedOut, &c.CreatedAt, &c.UpdatedAt)
}

// appendNumberDest appends the scan destinations of numberCols for n to dest.
func appendNumberDest(dest []any, n *PhoneNumber) []any {
	return append(dest, &n.ID, &n.ProjectID, &n.AccountID, &n.Number, &n.Type, &n.Country, &n.Name, &n.Metadata, &n.Carrier,
		&n.CampaignID, &n.AttachmentStatus, &n.CreatedAt, &n.UpdatedAt, &n.ReleasedAt)
}

// utcMessage puts a scanned message's times in UTC, as gorm's reads give them. The optional
// times change in place: the scan made each of them for this row.
func utcMessage(m *Message) {
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	for _, t := range [...]*time.Time{m.NotBefore, m.SendAt, m.SentAt, m.DeliveredAt, m.FailedAt, m.ReceivedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
}

func utcContact(c *Contact) { c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC() }

func utcNumber(n *PhoneNumber) {
	n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
	if n.ReleasedAt != nil {
		*n.ReleasedAt = n.ReleasedAt.UTC()
	}
}
