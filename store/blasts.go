package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// PrefixBlast is the TypeID prefix of blasts.
const PrefixBlast = "bst"

// Blast statuses as stored; the API shows a `sending` blast whose every recipient has been handled
// and none of whose messages waits any more as `sent`.
const (
	BlastScheduled = "scheduled"
	BlastSending   = "sending"
	BlastSent      = "sent"
	BlastCanceled  = "canceled"
)

// Blast is a one-time send to many recipients.
type Blast struct {
	ID            string
	ProjectID     string
	AccountID     string
	PhoneNumberID string
	Name          *string
	Body          *string
	// Attachments are the attachment URLs, in order.
	Attachments    StringList
	LinkShortening bool
	// Targets is the `to` list as given: E.164 numbers, ctc_ and aud_ ids. It is read only when
	// the blast is expanded (see BlastTargets) and never loaded with the blast otherwise.
	Targets StringList
	Status  string
	SendAt  time.Time
	// Recipients is the number of distinct recipients, known once the blast is expanded;
	// FannedOut how many of them its batches have handled, Skipped how many got no message.
	Recipients int
	FannedOut  int
	Skipped    int
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// BlastProgress counts a blast's messages by state.
type BlastProgress struct {
	// Queued counts messages scheduled, queued or sending.
	Queued, Sent, Delivered, Failed int
}

// StringList is a list of strings stored as a JSON array.
type StringList []string

// Value encodes the list as JSON; nil is stored as [].
func (l StringList) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

// Scan decodes a JSON array.
func (l *StringList) Scan(v any) error {
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	case nil:
		*l = nil
		return nil
	default:
		return fmt.Errorf("store: cannot scan %T into a string list", v)
	}
	return json.Unmarshal(b, (*[]string)(l))
}

// InsertBlast stores a new blast; call it in the transaction that enqueues its expansion.
// It records the blast with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) InsertBlast(ctx context.Context, b *Blast) error {
	return s.creating(ctx, b.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(b).Error, "insert blast") })
}

// GetBlast returns a project's blast, without its targets.
func (s *Store) GetBlast(ctx context.Context, projectID, id string) (*Blast, error) {
	var b Blast
	if err := s.q(ctx).Omit("targets").Where("id = ? AND project_id = ?", id, projectID).Take(&b).Error; err != nil {
		return nil, translate(err, "get blast "+id)
	}
	return &b, nil
}

// ListBlasts returns one page of an account's blasts, newest first, without their targets.
func (s *Store) ListBlasts(ctx context.Context, projectID, accountID string, p Page) ([]Blast, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	return paginate(s.q(ctx).Model(&Blast{}).Omit("targets").Where("account_id = ?", accountID), p,
		func(b *Blast) string { return b.ID })
}

// BlastTargets returns a blast's `to` list as given.
func (s *Store) BlastTargets(ctx context.Context, id string) (StringList, error) {
	var b Blast
	if err := s.q(ctx).Select("id", "targets").Where("id = ?", id).Take(&b).Error; err != nil {
		return nil, translate(err, "blast targets "+id)
	}
	return b.Targets, nil
}

// StartBlast moves a scheduled blast to sending with its number of recipients, and reports
// whether it was scheduled (a canceled or already started blast is left alone).
func (s *Store) StartBlast(ctx context.Context, id string, recipients int, at time.Time) (bool, error) {
	res := s.q(ctx).Model(&Blast{}).Where("id = ? AND status = ?", id, BlastScheduled).
		Updates(map[string]any{"status": BlastSending, "recipients": recipients, "updated_at": at})
	return res.RowsAffected == 1, translate(res.Error, "start blast "+id)
}

// CountFannedOut adds a fan-out batch's recipients to a sending blast's counters, and reports
// whether the blast is still sending; a batch that finds it canceled must roll back. Run it as
// the batch transaction's last statement: it holds the blast's row until the commit.
func (s *Store) CountFannedOut(ctx context.Context, id string, handled, skipped int, at time.Time) (bool, error) {
	res := s.q(ctx).Exec(`UPDATE blasts SET fanned_out = fanned_out + ?, skipped = skipped + ?, updated_at = ?
		WHERE id = ? AND status = ?`, handled, skipped, at, id, BlastSending)
	return res.RowsAffected == 1, translate(res.Error, "count blast progress "+id)
}

// CancelBlast cancels a scheduled or sending blast of the project and the messages of it that
// wait to be sent, and reports whether the blast could be canceled.
func (s *Store) CancelBlast(ctx context.Context, projectID, id string, at time.Time) (bool, error) {
	res := s.q(ctx).Model(&Blast{}).Where("id = ? AND project_id = ? AND status IN ?", id, projectID, []string{BlastScheduled, BlastSending}).
		Updates(map[string]any{"status": BlastCanceled, "updated_at": at})
	if res.Error != nil || res.RowsAffected == 0 {
		return false, translate(res.Error, "cancel blast "+id)
	}
	err := s.q(ctx).Model(&Message{}).Where("blast_id = ? AND status IN ?", id, []string{StatusScheduled, StatusQueued}).
		Updates(map[string]any{"status": StatusCanceled, "updated_at": at}).Error
	return true, translate(err, "cancel blast messages "+id)
}

// BlastProgressOf counts the messages of blasts by state, in one aggregate over their index.
func (s *Store) BlastProgressOf(ctx context.Context, ids []string) (map[string]BlastProgress, error) {
	out := make(map[string]BlastProgress, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		BlastID string
		Status  string
		N       int
	}
	err := scan(s.q(ctx).Raw(`SELECT blast_id, status, COUNT(*) AS n FROM messages WHERE blast_id IN ? GROUP BY blast_id, status`, ids), &rows).Error
	if err != nil {
		return nil, translate(err, "blast progress")
	}
	for _, r := range rows {
		p := out[r.BlastID]
		switch r.Status {
		case StatusScheduled, StatusQueued, StatusSending:
			p.Queued += r.N
		case StatusSent:
			p.Sent += r.N
		case StatusDelivered:
			p.Delivered += r.N
		case StatusFailed:
			p.Failed += r.N
		}
		out[r.BlastID] = p
	}
	return out, nil
}

// BlastRecipient is one distinct recipient of a blast: the message it got, or why it got none.
type BlastRecipient struct {
	BlastID     string
	PhoneNumber string
	ContactID   string
	MessageID   *string
	SkipReason  *string
}

// ClaimedBlastRecipients returns which of these phone numbers are recipients of the blast
// already (recorded by an earlier run of the same fan-out batch).
func (s *Store) ClaimedBlastRecipients(ctx context.Context, blastID string, phones []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := inChunks(phones, func(chunk []string) error {
		var got []string
		err := s.q(ctx).Model(&BlastRecipient{}).Where("blast_id = ? AND phone_number IN ?", blastID, chunk).Pluck("phone_number", &got).Error
		for _, p := range got {
			out[p] = true
		}
		return translate(err, "claimed blast recipients")
	})
	return out, err
}

// InsertBlastRecipients records recipients of a blast. The primary key (blast, phone number)
// refuses a recipient recorded twice (ErrDuplicate), which rolls back a batch that raced
// another run of itself; its retry then finds them claimed.
func (s *Store) InsertBlastRecipients(ctx context.Context, rows []BlastRecipient) error {
	if len(rows) == 0 {
		return nil
	}
	return translate(s.q(ctx).CreateInBatches(&rows, 1000).Error, "insert blast recipients")
}

// EnsureContacts finds or creates the account's contacts with these phone numbers (new ones have
// no other field) and returns them by phone number.
func (s *Store) EnsureContacts(ctx context.Context, projectID, accountID string, phones []string, at time.Time) (map[string]Contact, error) {
	fresh := make([]Contact, len(phones))
	for i, p := range phones {
		fresh[i] = Contact{ID: NewID(PrefixContact), ProjectID: projectID, AccountID: accountID, PhoneNumber: p,
			Metadata: Metadata{}, CreatedAt: at, UpdatedAt: at}
	}
	if len(fresh) > 0 {
		err := s.q(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "account_id"}, {Name: "phone_number"}}, DoNothing: true}).
			CreateInBatches(&fresh, 1000).Error
		if err != nil {
			return nil, translate(err, "create blast contacts")
		}
	}
	out := make(map[string]Contact, len(phones))
	err := inChunks(phones, func(chunk []string) error {
		var cs []Contact
		err := s.q(ctx).Where("account_id = ? AND phone_number IN ?", accountID, chunk).Find(&cs).Error
		for _, c := range cs {
			out[c.PhoneNumber] = c
		}
		return translate(err, "load blast contacts")
	})
	return out, err
}

// EnsureConversations finds or creates the conversations of a phone number with contacts and
// returns them by contact id, with those this call created.
func (s *Store) EnsureConversations(ctx context.Context, projectID, accountID, phoneNumberID string, contactIDs []string, at time.Time) (map[string]Conversation, []Conversation, error) {
	fresh := make([]Conversation, len(contactIDs))
	for i, c := range contactIDs {
		fresh[i] = Conversation{ID: NewID(PrefixConversation), ProjectID: projectID, AccountID: accountID,
			PhoneNumberID: phoneNumberID, ContactID: c, CreatedAt: at}
	}
	if len(fresh) > 0 {
		err := s.q(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "phone_number_id"}, {Name: "contact_id"}}, DoNothing: true}).
			CreateInBatches(&fresh, 1000).Error
		if err != nil {
			return nil, nil, translate(err, "create blast conversations")
		}
	}
	out := make(map[string]Conversation, len(contactIDs))
	err := inChunks(contactIDs, func(chunk []string) error {
		var cs []Conversation
		err := s.q(ctx).Where("phone_number_id = ? AND contact_id IN ?", phoneNumberID, chunk).Find(&cs).Error
		for _, c := range cs {
			out[c.ContactID] = c
		}
		return translate(err, "load blast conversations")
	})
	var created []Conversation
	for _, f := range fresh {
		if out[f.ContactID].ID == f.ID {
			created = append(created, f)
		}
	}
	return out, created, err
}

// InsertMessages stores many messages and their attachments at once, and puts the outbound ones
// that are queued or scheduled into the outbound queue; call it in a transaction.
func (s *Store) InsertMessages(ctx context.Context, msgs []Message, atts []Attachment) error {
	if len(msgs) > 0 {
		if err := s.q(ctx).CreateInBatches(&msgs, 500).Error; err != nil {
			return translate(err, "insert messages")
		}
	}
	if len(atts) > 0 {
		if err := s.q(ctx).CreateInBatches(&atts, 1000).Error; err != nil {
			return translate(err, "insert attachments")
		}
	}
	return s.enqueueOutbound(ctx, msgs)
}
