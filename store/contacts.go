package store

import (
	"context"
	"time"
)

// Contact is a phone number an account messages or hears from; unique per account.
type Contact struct {
	ID               string
	ProjectID        string
	AccountID        string
	PhoneNumber      string
	Email            *string
	FirstName        *string
	LastName         *string
	Metadata         Metadata
	OutboundDisabled bool
	OptedOut         bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// ContactPatch lists the fields an update changes; nil fields are left alone.
type ContactPatch struct {
	PhoneNumber      *string
	Email            *string
	FirstName        *string
	LastName         *string
	Metadata         Metadata
	OutboundDisabled *bool
}

// CreateContact inserts a contact into an account, which must be the project's. A second contact
// with the same phone number in the account is ErrDuplicate.
// It records the contact with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) CreateContact(ctx context.Context, c *Contact) error {
	if _, err := s.GetAccount(ctx, c.ProjectID, c.AccountID); err != nil {
		return err
	}
	c.ID = NewID(PrefixContact)
	c.CreatedAt = now()
	c.UpdatedAt = c.CreatedAt
	if c.Metadata == nil {
		c.Metadata = Metadata{}
	}
	return s.creating(ctx, c.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(c).Error, "create contact") })
}

// GetContact returns a project's contact.
func (s *Store) GetContact(ctx context.Context, projectID, id string) (*Contact, error) {
	var c Contact
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&c).Error; err != nil {
		return nil, translate(err, "get contact "+id)
	}
	return &c, nil
}

// ListContacts returns one page of an account's contacts.
func (s *Store) ListContacts(ctx context.Context, projectID, accountID string, p Page) ([]Contact, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	return paginate(s.q(ctx).Model(&Contact{}).Where("account_id = ?", accountID), p,
		func(c *Contact) string { return c.ID })
}

// UpdateContact applies a patch and returns the result; a phone number taken by another contact
// of the account is ErrDuplicate.
func (s *Store) UpdateContact(ctx context.Context, projectID, id string, patch ContactPatch) (*Contact, error) {
	var out *Contact
	err := s.Tx(ctx, func(tx *Store) error {
		c, err := tx.GetContact(ctx, projectID, id)
		if err != nil {
			return err
		}
		if patch.PhoneNumber != nil {
			c.PhoneNumber = *patch.PhoneNumber
		}
		if patch.Email != nil {
			c.Email = patch.Email
		}
		if patch.FirstName != nil {
			c.FirstName = patch.FirstName
		}
		if patch.LastName != nil {
			c.LastName = patch.LastName
		}
		if patch.Metadata != nil {
			c.Metadata = patch.Metadata
		}
		if patch.OutboundDisabled != nil {
			c.OutboundDisabled = *patch.OutboundDisabled
		}
		c.UpdatedAt = now()
		if err := tx.q(ctx).Select("*").Updates(c).Error; err != nil {
			return translate(err, "update contact")
		}
		out = c
		return nil
	})
	return out, err
}
