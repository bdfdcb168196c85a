package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// TypeID prefixes of messages and attachments.
const (
	PrefixMessage    = "msg"
	PrefixAttachment = "att"
)

// Message directions.
const (
	DirectionOutbound = "outbound"
	DirectionInbound  = "inbound"
)

// Message statuses. Outbound: scheduled → queued → sending → sent → delivered | failed, and
// scheduled → canceled. Inbound messages are received.
const (
	StatusScheduled = "scheduled"
	StatusQueued    = "queued"
	StatusSending   = "sending"
	StatusSent      = "sent"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	StatusCanceled  = "canceled"
	StatusReceived  = "received"
)

// Message is one SMS or MMS, outbound or inbound.
type Message struct {
	ID             string
	ProjectID      string
	AccountID      string
	ConversationID string
	PhoneNumberID  string
	// SenderType is the type of the account's number (local, toll_free, short_code, demo); it
	// selects the number's pace.
	SenderType string
	ContactID  string
	Direction  string
	Status     string
	Body       *string
	Metadata   Metadata
	// Encoding is gsm7 or ucs2; Type is sms or mms.
	Encoding string
	Segments int
	Type     string
	// FromNumber and ToNumber are the numbers as submitted (outbound) or received (inbound).
	FromNumber string
	ToNumber   string
	// Carrier is the adapter that carries the message; CarrierID its id of the message.
	Carrier   string
	CarrierID *string
	BlastID   *string
	// AutoReply marks the service's own replies (STOP/START/HELP confirmations).
	AutoReply bool
	// Traceparent is the W3C traceparent of the request that sent the message, when tracing
	// recorded it: its dispatch and events continue that trace.
	Traceparent   *string
	FailureReason *string
	// NotBefore is the pacing slot reserved for the message, once it has one.
	NotBefore   *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	SendAt      *time.Time
	SentAt      *time.Time
	DeliveredAt *time.Time
	FailedAt    *time.Time
	ReceivedAt  *time.Time
}

// Attachment is a file of a message: the URL it was sent with and, once fetched, its bytes.
type Attachment struct {
	ID        string
	ProjectID string
	MessageID string
	Position  int
	URL       string
	// Type is image, video, contact, file or link; ContentType the fetched file's media type.
	Type        string
	ContentType *string
	Size        *int64
	Data        []byte
	FetchedAt   *time.Time
	// UnavailableAt is set when an inbound file could not be fetched from the carrier, for good.
	UnavailableAt *time.Time
}

// MessageView is a message with its contact, phone number and attachments (without their bytes),
// as the API and the events show it.
type MessageView struct {
	Message
	Contact     Contact
	PhoneNumber PhoneNumber
	Attachments []Attachment
}

// InsertMessage stores a message and its attachments, and puts an outbound message that is queued
// or scheduled into the outbound queue; call it inside a transaction.
func (s *Store) InsertMessage(ctx context.Context, m *Message, atts []Attachment) error {
	if m.Metadata == nil {
		m.Metadata = Metadata{}
	}
	if err := s.q(ctx).Create(m).Error; err != nil {
		return translate(err, "insert message")
	}
	if len(atts) > 0 {
		if err := s.q(ctx).Create(&atts).Error; err != nil {
			return translate(err, "insert attachments")
		}
	}
	return s.enqueueOutbound(ctx, []Message{*m})
}

// InsertOutbound stores an outbound message and its attachments, as InsertMessage does, and puts
// it into the outbound queue (due at its send_at, or at once), all or nothing: inside Tx it joins
// the transaction, outside it needs none of the caller's. On PostgreSQL a message without
// attachments goes in one statement, which outside a transaction is the whole write: no BEGIN and
// COMMIT round trips. The message is recorded with the request's claimed Idempotency-Key (see
// WithIdempotencyClaim) in the same statement or transaction.
func (s *Store) InsertOutbound(ctx context.Context, m *Message, atts []Attachment) error {
	conn := sqlConn(s.db)
	if m.Metadata == nil {
		m.Metadata = Metadata{}
	}
	var stmt *gorm.Statement
	if s.dialect == Postgres && len(atts) == 0 && conn != nil {
		stmt = s.db.Session(&gorm.Session{DryRun: true, NewDB: true}).Create(m).Statement
	}
	insert, claimed := "", claimOf(ctx)
	if stmt != nil {
		insert = stmt.SQL.String()
		if claimed != nil {
			insert = insertIf(insert, "k")
		} else {
			insert += " RETURNING id"
		}
	}
	if insert == "" {
		return s.creating(ctx, m.ID, func(tx *Store) error {
			if sqlTx(tx.db) == nil {
				return tx.Tx(ctx, func(tx *Store) error { return tx.InsertOutbound(ctx, m, atts) })
			}
			return tx.InsertMessage(ctx, m, atts)
		})
	}
	var sb strings.Builder
	args := append([]any(nil), stmt.Vars...)
	if claimed != nil {
		// k records the message with the key, and only while the request holds the key's claim;
		// m and its queue row are written only when k was.
		n := len(args)
		fmt.Fprintf(&sb, "WITH k AS (UPDATE idempotency_keys SET resource_id = $%d WHERE project_id = $%d AND key = $%d AND token = $%d AND status = 0 RETURNING 1), ",
			n+1, n+2, n+3, n+4)
		args = append(args, m.ID, claimed.ProjectID, claimed.Key, claimed.Token)
		sb.WriteString("m AS (")
	} else {
		sb.WriteString("WITH m AS (")
	}
	sb.WriteString(insert)
	fmt.Fprintf(&sb, ") INSERT INTO outbound_queue (message_id, due_at) SELECT id, $%d FROM m", len(args)+1)
	args = append(args, queuedSince(m).UTC())
	res, err := conn.ExecContext(ctx, sb.String(), args...)
	if err != nil {
		return translate(err, "insert message")
	}
	if n, err := res.RowsAffected(); claimed != nil && err == nil && n == 0 {
		return fmt.Errorf("insert message: %w", ErrIdempotencyClaimLost)
	}
	if !s.inTx() {
		s.wake(WakeOutbound)
	}
	return nil
}

// insertIf turns gorm's single-row INSERT INTO … (…) VALUES (…) into an INSERT INTO … (…)
// SELECT … WHERE EXISTS (SELECT 1 FROM cte) RETURNING id: the row is written only when the
// statement's common table expression cte returned a row, and the row is counted for the queue
// insert that follows. It returns "" for any other shape.
func insertIf(insert, cte string) string {
	head, values, ok := strings.Cut(insert, ") VALUES (")
	if !ok || !strings.HasSuffix(values, ")") || strings.Contains(values, ") VALUES (") {
		return ""
	}
	return head + ") SELECT " + strings.TrimSuffix(values, ")") + " WHERE EXISTS (SELECT 1 FROM " + cte + ") RETURNING id"
}

// GetMessage returns a project's message with its conversation's contact and number.
func (s *Store) GetMessage(ctx context.Context, projectID, id string) (*MessageView, error) {
	var m Message
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&m).Error; err != nil {
		return nil, translate(err, "get message "+id)
	}
	views, err := s.MessageViews(ctx, []Message{m})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// ListMessages returns one page of an account's messages, of one conversation's thread (without
// blast messages) when conversationID is not empty.
func (s *Store) ListMessages(ctx context.Context, projectID, accountID, conversationID string, p Page) ([]MessageView, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	q := s.q(ctx).Model(&Message{}).Where("account_id = ?", accountID)
	if conversationID != "" {
		// A conversation's thread leaves out blast messages: they are not threaded into it.
		q = q.Where("conversation_id = ? AND blast_id IS NULL", conversationID)
	}
	rows, cur, err := paginate(q, p, func(m *Message) string { return m.ID })
	if err != nil {
		return nil, cur, err
	}
	views, err := s.MessageViews(ctx, rows)
	return views, cur, err
}

// MessageViews completes messages with their contacts, numbers and attachments in three queries.
func (s *Store) MessageViews(ctx context.Context, msgs []Message) ([]MessageView, error) {
	out := make([]MessageView, len(msgs))
	if len(msgs) == 0 {
		return out, nil
	}
	ids := make([]string, len(msgs))
	contactIDs := make([]string, len(msgs))
	numberIDs := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i], contactIDs[i], numberIDs[i] = m.ID, m.ContactID, m.PhoneNumberID
	}
	contacts, numbers, err := s.contactsAndNumbers(ctx, contactIDs, numberIDs)
	if err != nil {
		return nil, err
	}
	// Only MMS have attachments: a page of SMS needs no query for them.
	var withMedia []string
	for _, m := range msgs {
		if m.Type != "sms" {
			withMedia = append(withMedia, m.ID)
		}
	}
	var atts []Attachment
	if len(withMedia) > 0 {
		if err := s.q(ctx).Omit("data").Where("message_id IN ?", withMedia).Order("message_id, position").Find(&atts).Error; err != nil {
			return nil, translate(err, "load attachments")
		}
	}
	byMsg := map[string][]Attachment{}
	for _, a := range atts {
		byMsg[a.MessageID] = append(byMsg[a.MessageID], a)
	}
	for i, m := range msgs {
		out[i] = MessageView{Message: m, Contact: contacts[m.ContactID], PhoneNumber: numbers[m.PhoneNumberID], Attachments: byMsg[m.ID]}
	}
	return out, nil
}

// LockMessage reads a message for update inside a transaction (row lock on PostgreSQL; SQLite
// transactions already hold the database's write lock).
func (s *Store) LockMessage(ctx context.Context, id string) (*Message, error) {
	q := s.q(ctx)
	if s.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var m Message
	if err := q.Where("id = ?", id).Take(&m).Error; err != nil {
		return nil, translate(err, "lock message "+id)
	}
	return &m, nil
}

// UpdateMessage sets fields of a message that is in one of the statuses from, and reports
// whether it was.
func (s *Store) UpdateMessage(ctx context.Context, id string, from []string, fields map[string]any) (bool, error) {
	res := s.q(ctx).Model(&Message{}).Where("id = ? AND status IN ?", id, from).Updates(fields)
	if res.Error != nil {
		return false, translate(res.Error, "update message "+id)
	}
	return res.RowsAffected == 1, nil
}

// InboundMessageByCarrierID returns the inbound message a carrier reported under its id
// (inbound_carrier_id is the carrier_id of inbound messages, NULL for outbound ones).
func (s *Store) InboundMessageByCarrierID(ctx context.Context, carrier, carrierID string) (*Message, error) {
	var m Message
	if err := s.q(ctx).Where("carrier = ? AND inbound_carrier_id = ?", carrier, carrierID).
		Take(&m).Error; err != nil {
		return nil, translate(err, "find inbound message")
	}
	return &m, nil
}

// InboundSeen reports whether the carrier's inbound message was stored already.
func (s *Store) InboundSeen(ctx context.Context, carrier, carrierID string) (bool, error) {
	var n int64
	err := s.q(ctx).Model(&Message{}).Where("carrier = ? AND inbound_carrier_id = ?", carrier, carrierID).
		Limit(1).Count(&n).Error
	return n > 0, translate(err, "find inbound message")
}

// Sender is a phone number of an account with what decides whether it may send.
type Sender struct {
	PhoneNumber `gorm:"embedded"`
	// CampaignStatus is the status of the number's campaign, if it has one.
	CampaignStatus *string
	// TollFreeActive counts the number's active toll-free campaigns.
	TollFreeActive int
}

// DemoNumber returns the installation's shared demo number; ErrNotFound when there is none.
func (s *Store) DemoNumber(ctx context.Context) (*PhoneNumber, error) {
	var n PhoneNumber
	if err := s.q(ctx).Where("type = ? AND released_at IS NULL", NumberDemo).Order("id").Take(&n).Error; err != nil {
		return nil, translate(err, "demo number")
	}
	return &n, nil
}

// TakeDemoSend counts one demo-key send for the account inside the caller's transaction, and
// reports false (counting nothing) when the account has already sent limit.
func (s *Store) TakeDemoSend(ctx context.Context, accountID string, limit int) (bool, error) {
	res := s.q(ctx).Exec(`INSERT INTO demo_usage (account_id, sent) VALUES (?, 1)
		ON CONFLICT (account_id) DO UPDATE SET sent = demo_usage.sent + 1 WHERE demo_usage.sent < ?`, accountID, limit)
	if res.Error != nil {
		return false, translate(res.Error, "count demo send")
	}
	return res.RowsAffected == 1 && limit > 0, nil
}

// DemoCorrespondent returns the message the demo number most recently sent to a handset, which
// tells whose conversation an inbound message to the shared demo number belongs to.
func (s *Store) DemoCorrespondent(ctx context.Context, demoNumberID, handset string) (*Message, error) {
	var m Message
	// The demo sender type, written in the statement (a parameter would hide it from a generic
	// plan), lets the read use messages_demo_reply, which indexes the demo number's messages only.
	err := s.q(ctx).Where("phone_number_id = ? AND to_number = ? AND direction = ? AND sender_type = '"+NumberDemo+"'", demoNumberID,
		handset, DirectionOutbound).
		Order("id DESC").Take(&m).Error
	if err != nil {
		return nil, translate(err, "demo correspondent")
	}
	return &m, nil
}

// BlockedNumber is a handset that failed hard (invalid or unreachable) for an account.
type BlockedNumber struct {
	AccountID   string
	PhoneNumber string
	// Reason is the failure reason that blocked it.
	Reason    string
	BlockedAt time.Time
	// RetryAfter is when a send is tried for real again.
	RetryAfter time.Time
}

// GetBlockedNumber returns the account's block on a handset, or nil when there is none.
func (s *Store) GetBlockedNumber(ctx context.Context, accountID, phone string) (*BlockedNumber, error) {
	var b BlockedNumber
	err := s.q(ctx).Where("account_id = ? AND phone_number = ?", accountID, phone).Take(&b).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err, "get blocked number")
	}
	return &b, nil
}

// BlockNumber blocks (or re-blocks) a handset for an account.
func (s *Store) BlockNumber(ctx context.Context, b BlockedNumber) error {
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "account_id"}, {Name: "phone_number"}},
		DoUpdates: clause.AssignmentColumns([]string{"reason", "blocked_at", "retry_after"}),
	}).Create(&b).Error
	return translate(err, "block number")
}

// UnblockNumber lifts an account's block on a handset, if any.
func (s *Store) UnblockNumber(ctx context.Context, accountID, phone string) error {
	err := s.q(ctx).Where("account_id = ? AND phone_number = ?", accountID, phone).Delete(&BlockedNumber{}).Error
	return translate(err, "unblock number")
}

// ReserveSendSlot takes the next sending slot of a phone number that sends one message per
// interval, and returns when that slot is (never before now). The slot is claimed atomically in
// the database, so every instance that sends from the number shares one pace.
func (s *Store) ReserveSendSlot(ctx context.Context, phoneNumberID string, now time.Time, interval time.Duration) (time.Time, error) {
	return s.ReserveSendSlots(ctx, phoneNumberID, now, interval, 1)
}

// ReserveSendSlots takes the next n consecutive sending slots of a phone number and returns when
// the first is; the others follow at interval.
func (s *Store) ReserveSendSlots(ctx context.Context, phoneNumberID string, now time.Time, interval time.Duration, n int) (time.Time, error) {
	return s.reserveSlots(ctx, phoneNumberID, now.UnixMicro(), interval.Microseconds(), int64(n))
}

func (s *Store) reserveSlots(ctx context.Context, phoneNumberID string, n, step, count int64) (time.Time, error) {
	iv := step * count
	var next int64
	err := scan(s.q(ctx).Raw(`INSERT INTO sender_pacing (phone_number_id, next_slot_us) VALUES (?, ?)
		ON CONFLICT (phone_number_id) DO UPDATE SET next_slot_us =
			CASE WHEN sender_pacing.next_slot_us > ? THEN sender_pacing.next_slot_us ELSE ? END + ?
		RETURNING next_slot_us`, phoneNumberID, n+iv, n, n, iv), &next).Error
	if err != nil {
		return time.Time{}, translate(err, "reserve send slot")
	}
	return time.UnixMicro(next - iv).UTC(), nil
}

// SaveAttachmentFile stores the fetched bytes of an attachment.
func (s *Store) SaveAttachmentFile(ctx context.Context, id, typ, contentType string, data []byte, at time.Time) error {
	size := int64(len(data))
	err := s.q(ctx).Model(&Attachment{}).Where("id = ?", id).Updates(map[string]any{
		"type": typ, "content_type": contentType, "size": size, "data": data, "fetched_at": at,
	}).Error
	return translate(err, "save attachment "+id)
}

// AttachmentFate is what became of an inbound attachment's file: its bytes, or nil Data when it
// is unavailable for good.
type AttachmentFate struct {
	Type, ContentType string
	Data              []byte
	At                time.Time
}

// SettleAttachment records the fate of an attachment of a message whose file is neither stored
// nor unavailable yet, and returns whether this call settled it and how many of the message's
// attachments are left unsettled. Call it in the transaction that holds the message's lock, so
// that exactly one call sees the message's last attachment settled.
func (s *Store) SettleAttachment(ctx context.Context, messageID, id string, f AttachmentFate) (bool, int64, error) {
	set := map[string]any{"unavailable_at": f.At}
	if f.Data != nil {
		set = map[string]any{"type": f.Type, "content_type": f.ContentType, "size": int64(len(f.Data)), "data": f.Data, "fetched_at": f.At}
	}
	const pending = "fetched_at IS NULL AND unavailable_at IS NULL"
	res := s.q(ctx).Model(&Attachment{}).Where("id = ? AND message_id = ? AND "+pending, id, messageID).Updates(set)
	if res.Error != nil {
		return false, 0, translate(res.Error, "settle attachment "+id)
	}
	var left int64
	err := s.q(ctx).Model(&Attachment{}).Where("message_id = ? AND "+pending, messageID).Count(&left).Error
	return res.RowsAffected == 1, left, translate(err, "count unsettled attachments")
}

// GetAttachment returns a project's attachment without its bytes.
func (s *Store) GetAttachment(ctx context.Context, projectID, id string) (*Attachment, error) {
	var a Attachment
	if err := s.q(ctx).Omit("data").Where("id = ? AND project_id = ?", id, projectID).Take(&a).Error; err != nil {
		return nil, translate(err, "get attachment "+id)
	}
	return &a, nil
}

// AttachmentFile returns an attachment with its bytes, whoever holds it (the caller has checked a
// signature).
func (s *Store) AttachmentFile(ctx context.Context, id string) (*Attachment, error) {
	var a Attachment
	if err := s.q(ctx).Where("id = ?", id).Take(&a).Error; err != nil {
		return nil, translate(err, "attachment file "+id)
	}
	return &a, nil
}

// MessageAttachmentsMeta returns a message's attachments without their bytes, in order.
func (s *Store) MessageAttachmentsMeta(ctx context.Context, messageID string) ([]Attachment, error) {
	var atts []Attachment
	err := s.q(ctx).Omit("data").Where("message_id = ?", messageID).Order("position").Find(&atts).Error
	return atts, translate(err, "message attachments")
}

// MessageAttachments returns a message's attachments with their bytes, in order.
func (s *Store) MessageAttachments(ctx context.Context, messageID string) ([]Attachment, error) {
	var atts []Attachment
	err := s.q(ctx).Where("message_id = ?", messageID).Order("position").Find(&atts).Error
	return atts, translate(err, "message attachments")
}

// InstallationSecret returns the installation's random secret of this name, creating it (size
// bytes) on first use. Every instance sharing the database gets the same secret.
func (s *Store) InstallationSecret(ctx context.Context, name string, size int) ([]byte, error) {
	fresh := make([]byte, size)
	_, _ = rand.Read(fresh)
	if err := s.q(ctx).Exec(`INSERT INTO installation_secrets (name, secret, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, fresh, now()).Error; err != nil {
		return nil, translate(err, "create installation secret")
	}
	var secret []byte
	if err := s.q(ctx).Raw(`SELECT secret FROM installation_secrets WHERE name = ?`, name).Row().Scan(&secret); err != nil {
		return nil, translate(err, "read installation secret")
	}
	return secret, nil
}

// SetContactOptedOut records a contact's opt-out (true) or opt-in (false).
func (s *Store) SetContactOptedOut(ctx context.Context, contactID string, optedOut bool, at time.Time) error {
	err := s.q(ctx).Model(&Contact{}).Where("id = ?", contactID).Updates(map[string]any{"opted_out": optedOut, "updated_at": at}).Error
	return translate(err, "set contact opted out")
}

// BlockedAmong returns the accounts' blocks on these handsets, keyed by account id and number.
func (s *Store) BlockedAmong(ctx context.Context, accountIDs, phones []string) (map[[2]string]BlockedNumber, error) {
	out := map[[2]string]BlockedNumber{}
	if len(phones) == 0 {
		return out, nil
	}
	var rows []BlockedNumber
	if err := s.q(ctx).Where("account_id IN ? AND phone_number IN ?", uniq(accountIDs), uniq(phones)).Find(&rows).Error; err != nil {
		return nil, translate(err, "blocked numbers")
	}
	for _, b := range rows {
		out[[2]string{b.AccountID, b.PhoneNumber}] = b
	}
	return out, nil
}

// MarkSending moves queued messages to sending.
func (s *Store) MarkSending(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.q(ctx).Model(&Message{}).Where("id IN ? AND status IN ?", ids, []string{StatusQueued, StatusScheduled}).
		Updates(map[string]any{"status": StatusSending, "updated_at": at}).Error
	return translate(err, "mark messages sending")
}

// InboundSince reports whether the contact has sent the account a message received at or after since.
func (s *Store) InboundSince(ctx context.Context, contactID string, since time.Time) (bool, error) {
	var n int64
	err := s.q(ctx).Raw(`SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE contact_id = ? AND direction = 'inbound'
		AND received_at >= ? LIMIT 1) x`, contactID, since.UTC()).Scan(&n).Error
	return n > 0, translate(err, "find a recent inbound message")
}

// SendContext is what a send checks before it writes: the account and its sender.
type SendContext struct {
	// Archived is true when the account is archived.
	Archived bool
	// Sender is the sending number, nil when the account has none matching.
	Sender *Sender
	// Known is what exists already of the recipient's pair with Sender, when LoadSendContext was
	// given the recipient: the account's contact with the number (nil when there is none yet) and
	// its conversation with Sender (nil when there is none yet). ResolvePair takes it.
	Known *Pair
	// QuietHours, QuietHoursStart, QuietHoursEnd and TimeZone are the account's fields of those
	// names.
	QuietHours                     bool
	QuietHoursStart, QuietHoursEnd int
	TimeZone                       *string
}

// LoadSendContext reads, in one query, whether the project's account is archived and the
// account's held number named by ref (as FindSender does), and, when recipient is not empty, what
// exists of the recipient's contact and conversation with that number (SendContext.Known). A
// missing account is ErrNotFound.
func (s *Store) LoadSendContext(ctx context.Context, projectID, accountID, ref, recipient string) (*SendContext, error) {
	q := `SELECT a.archived_at AS account_archived_at, a.quiet_hours, a.quiet_hours_start, a.quiet_hours_end,
		a.time_zone, pn.id, pn.project_id, pn.account_id, pn.number, pn.type, pn.country,
		pn.name, pn.metadata, pn.carrier, pn.campaign_id, pn.attachment_status, pn.created_at, pn.updated_at,
		(SELECT c.status FROM campaigns c WHERE c.id = pn.campaign_id) AS campaign_status,
		(SELECT COUNT(*) FROM toll_free_campaigns t WHERE t.phone_number_id = pn.id AND t.status = ?) AS toll_free_active,
		k.id AS k_id, k.project_id AS k_project_id, k.account_id AS k_account_id, k.phone_number AS k_phone_number,
		k.email AS k_email, k.first_name AS k_first_name, k.last_name AS k_last_name, k.metadata AS k_metadata,
		k.outbound_disabled AS k_outbound_disabled, k.opted_out AS k_opted_out, k.created_at AS k_created_at,
		k.updated_at AS k_updated_at, cv.id AS conv_id, cv.created_at AS conv_created_at
		FROM accounts a LEFT JOIN phone_numbers pn ON pn.account_id = a.id AND pn.project_id = a.project_id
			AND pn.released_at IS NULL`
	args := []any{CampaignActive}
	if ref != "" {
		q += ` AND (pn.id = ? OR pn.number = ?)`
		args = append(args, ref, ref)
	}
	q += ` LEFT JOIN contacts k ON k.account_id = a.id AND k.phone_number = ?
		LEFT JOIN conversations cv ON cv.contact_id = k.id AND cv.phone_number_id = pn.id
		WHERE a.id = ? AND a.project_id = ? ORDER BY pn.id LIMIT 1`
	args = append(args, recipient, accountID, projectID)
	var row struct {
		Known             Contact `gorm:"embedded;embeddedPrefix:k_"`
		ConvID            *string
		ConvCreatedAt     *time.Time
		AccountArchivedAt *time.Time
		QuietHours        bool
		QuietHoursStart   int
		QuietHoursEnd     int
		TimeZone          *string
		ID                *string
		ProjectID         *string
		AccountID         *string
		Number            *string
		Type              *string
		Country           *string
		Name              *string
		Metadata          Metadata
		Carrier           *string
		CampaignID        *string
		AttachmentStatus  *string
		CreatedAt         *time.Time
		UpdatedAt         *time.Time
		CampaignStatus    *string
		TollFreeActive    *int
	}
	res := scan(s.q(ctx).Raw(q, args...), &row)
	if res.Error != nil {
		return nil, translate(res.Error, "load send context")
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("load send context of account %s: %w", accountID, ErrNotFound)
	}
	out := &SendContext{Archived: row.AccountArchivedAt != nil, QuietHours: row.QuietHours,
		QuietHoursStart: row.QuietHoursStart, QuietHoursEnd: row.QuietHoursEnd, TimeZone: row.TimeZone}
	if row.ID == nil {
		return out, nil
	}
	if recipient != "" {
		out.Known = &Pair{}
		if row.Known.ID != "" {
			c := row.Known
			out.Known.Contact = &c
			if row.ConvID != nil {
				out.Known.Conversation = &Conversation{ID: *row.ConvID, ProjectID: c.ProjectID, AccountID: c.AccountID,
					PhoneNumberID: *row.ID, ContactID: c.ID, CreatedAt: *row.ConvCreatedAt}
			}
		}
	}
	out.Sender = &Sender{PhoneNumber: PhoneNumber{ID: *row.ID, ProjectID: deref(row.ProjectID), AccountID: row.AccountID,
		Number: deref(row.Number), Type: deref(row.Type), Country: deref(row.Country), Name: row.Name, Metadata: row.Metadata,
		Carrier: deref(row.Carrier), CampaignID: row.CampaignID, AttachmentStatus: row.AttachmentStatus},
		CampaignStatus: row.CampaignStatus}
	if row.CreatedAt != nil {
		out.Sender.CreatedAt = *row.CreatedAt
	}
	if row.UpdatedAt != nil {
		out.Sender.UpdatedAt = *row.UpdatedAt
	}
	if row.TollFreeActive != nil {
		out.Sender.TollFreeActive = *row.TollFreeActive
	}
	return out, nil
}

// TxAsync is Tx whose commit does not wait for the write-ahead log to reach the disk
// (PostgreSQL's synchronous_commit off; SQLite's WAL mode never waits). A crash of the database
// can lose such a commit, never corrupt it; and the next commit that waits makes every earlier
// one durable. Use it only for work that is redone when lost and is always followed by a commit
// that waits: a job's own transactions, which River's completion of the job (a waiting commit)
// follows, and which run again when the job did not complete.
func (s *Store) TxAsync(ctx context.Context, fn func(tx *Store) error) error {
	return s.Tx(ctx, func(tx *Store) error {
		if s.dialect == Postgres {
			if err := tx.q(ctx).Exec("SET LOCAL synchronous_commit = off").Error; err != nil {
				return translate(err, "asynchronous commit")
			}
		}
		return fn(tx)
	})
}

// NewPair is what a send to a recipient the account has no contact for writes besides its
// message: the contact, its conversation with the sender and the conversation.created event.
type NewPair struct {
	Contact      Contact
	Conversation Conversation
	Event        Event
}
