package store

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// PrefixConversation is the TypeID prefix of conversations.
const PrefixConversation = "cnv"

// Conversation is the thread between one phone number and one contact of an account; there is at
// most one per (phone number, contact) pair.
type Conversation struct {
	ID            string
	ProjectID     string
	AccountID     string
	PhoneNumberID string
	ContactID     string
	CreatedAt     time.Time
}

// ConversationView is a conversation with its contact and phone number, as the API shows it.
type ConversationView struct {
	Conversation
	Contact     Contact
	PhoneNumber PhoneNumber
}

// Pair is the contact and conversation a message belongs to, found or created by ResolvePair.
type Pair struct {
	Contact      *Contact
	Conversation *Conversation
	// ContactCreated and ConversationCreated say whether this call created them.
	ContactCreated      bool
	ConversationCreated bool
}

// Complete reports whether both the contact and the conversation exist: nothing to create.
func (p *Pair) Complete() bool { return p != nil && p.Contact != nil && p.Conversation != nil }

// ResolvePair finds or creates, inside the caller's transaction, the account's contact with the
// phone number (created from init, whose other fields fill a new contact only) and its
// conversation with the phone number phoneNumberID. Concurrent callers agree on one contact and
// one conversation: inserts that lose a race are ignored and the winner's row is read. known,
// when not nil, is what the caller read already (SendContext.Known), which saves reading it again.
func (s *Store) ResolvePair(ctx context.Context, init Contact, phoneNumberID string, at time.Time, known *Pair) (*Pair, error) {
	type row struct {
		Contact       `gorm:"embedded"`
		ConvID        *string
		ConvCreatedAt *time.Time
	}
	find := func() (*row, error) {
		var r row
		res := scan(s.q(ctx).Raw(`SELECT c.*, cv.id AS conv_id, cv.created_at AS conv_created_at
			FROM contacts c LEFT JOIN conversations cv ON cv.contact_id = c.id AND cv.phone_number_id = ?
			WHERE c.account_id = ? AND c.phone_number = ?`, phoneNumberID, init.AccountID, init.PhoneNumber), &r)
		if res.Error != nil {
			return nil, translate(res.Error, "resolve contact")
		}
		if res.RowsAffected == 0 {
			return nil, nil
		}
		return &r, nil
	}
	p := &Pair{}
	var r *row
	var err error
	switch {
	case known == nil:
		if r, err = find(); err != nil {
			return nil, err
		}
	case known.Contact != nil && known.Conversation != nil:
		return &Pair{Contact: known.Contact, Conversation: known.Conversation}, nil
	case known.Contact != nil:
		r = &row{Contact: *known.Contact}
	}
	if r == nil {
		c := init
		c.ID, c.CreatedAt, c.UpdatedAt = NewID(PrefixContact), at, at
		if c.Metadata == nil {
			c.Metadata = Metadata{}
		}
		res := s.q(ctx).Exec(`INSERT INTO contacts (id, project_id, account_id, phone_number, email, first_name, last_name,
			metadata, outbound_disabled, opted_out, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE, ?, ?) ON CONFLICT (account_id, phone_number) DO NOTHING`,
			c.ID, c.ProjectID, c.AccountID, c.PhoneNumber, c.Email, c.FirstName, c.LastName, c.Metadata, c.OutboundDisabled, at, at)
		if res.Error != nil {
			return nil, translate(res.Error, "create contact")
		}
		p.ContactCreated = res.RowsAffected == 1
		if r, err = find(); err != nil {
			return nil, err
		}
		if r == nil {
			return nil, translate(gorm.ErrRecordNotFound, "resolve contact")
		}
	}
	contact := r.Contact
	p.Contact = &contact
	if r.ConvID != nil {
		p.Conversation = &Conversation{ID: *r.ConvID, ProjectID: contact.ProjectID, AccountID: contact.AccountID,
			PhoneNumberID: phoneNumberID, ContactID: contact.ID, CreatedAt: *r.ConvCreatedAt}
		return p, nil
	}
	cv := &Conversation{ID: NewID(PrefixConversation), ProjectID: contact.ProjectID, AccountID: contact.AccountID,
		PhoneNumberID: phoneNumberID, ContactID: contact.ID, CreatedAt: at}
	res := s.q(ctx).Exec(`INSERT INTO conversations (id, project_id, account_id, phone_number_id, contact_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (phone_number_id, contact_id) DO NOTHING`,
		cv.ID, cv.ProjectID, cv.AccountID, cv.PhoneNumberID, cv.ContactID, cv.CreatedAt)
	if res.Error != nil {
		return nil, translate(res.Error, "create conversation")
	}
	if res.RowsAffected == 1 {
		p.Conversation, p.ConversationCreated = cv, true
		return p, nil
	}
	var existing Conversation
	if err := s.q(ctx).Where("phone_number_id = ? AND contact_id = ?", phoneNumberID, contact.ID).Take(&existing).Error; err != nil {
		return nil, translate(err, "resolve conversation")
	}
	p.Conversation = &existing
	return p, nil
}

// GetConversation returns a project's conversation with its contact and phone number.
func (s *Store) GetConversation(ctx context.Context, projectID, id string) (*ConversationView, error) {
	var c Conversation
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&c).Error; err != nil {
		return nil, translate(err, "get conversation "+id)
	}
	views, err := s.conversationViews(ctx, []Conversation{c})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// ListConversations returns one page of an account's conversations, newest first.
func (s *Store) ListConversations(ctx context.Context, projectID, accountID string, p Page) ([]ConversationView, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	rows, cur, err := paginate(s.q(ctx).Model(&Conversation{}).Where("account_id = ?", accountID), p,
		func(c *Conversation) string { return c.ID })
	if err != nil {
		return nil, cur, err
	}
	views, err := s.conversationViews(ctx, rows)
	return views, cur, err
}

// conversationViews loads the contacts and phone numbers of conversations in two queries.
func (s *Store) conversationViews(ctx context.Context, convs []Conversation) ([]ConversationView, error) {
	contactIDs := make([]string, 0, len(convs))
	numberIDs := make([]string, 0, len(convs))
	for _, c := range convs {
		contactIDs = append(contactIDs, c.ContactID)
		numberIDs = append(numberIDs, c.PhoneNumberID)
	}
	contacts, numbers, err := s.contactsAndNumbers(ctx, contactIDs, numberIDs)
	if err != nil {
		return nil, err
	}
	out := make([]ConversationView, len(convs))
	for i, c := range convs {
		out[i] = ConversationView{Conversation: c, Contact: contacts[c.ContactID], PhoneNumber: numbers[c.PhoneNumberID]}
	}
	return out, nil
}

// contactsAndNumbers loads contacts and phone numbers by id.
func (s *Store) contactsAndNumbers(ctx context.Context, contactIDs, numberIDs []string) (map[string]Contact, map[string]PhoneNumber, error) {
	contacts := map[string]Contact{}
	numbers := map[string]PhoneNumber{}
	if len(contactIDs) == 0 {
		return contacts, numbers, nil
	}
	var cs []Contact
	if err := s.q(ctx).Where("id IN ?", uniq(contactIDs)).Find(&cs).Error; err != nil {
		return nil, nil, translate(err, "load contacts")
	}
	for _, c := range cs {
		contacts[c.ID] = c
	}
	var ns []PhoneNumber
	if err := s.q(ctx).Where("id IN ?", uniq(numberIDs)).Find(&ns).Error; err != nil {
		return nil, nil, translate(err, "load phone numbers")
	}
	for _, n := range ns {
		numbers[n.ID] = n
	}
	return contacts, numbers, nil
}

func uniq(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
