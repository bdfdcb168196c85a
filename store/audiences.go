package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// TypeID prefixes of audiences and of their memberships (a membership's id is only ever seen
// inside an opaque list cursor).
const (
	PrefixAudience           = "aud"
	prefixAudienceMembership = "aum"
)

// Audience is a named, reusable list of an account's contacts that blasts can target.
type Audience struct {
	ID        string
	ProjectID string
	AccountID string
	Name      string
	CreatedAt time.Time
}

// AudienceContact is one member of an audience. ID orders the members, most recently added first.
type AudienceContact struct {
	AudienceID string
	ContactID  string
	ID         string
	AddedAt    time.Time
}

// CreateAudience inserts an audience into an account, which must be the project's.
// It records the audience with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) CreateAudience(ctx context.Context, a *Audience) error {
	if _, err := s.GetAccount(ctx, a.ProjectID, a.AccountID); err != nil {
		return err
	}
	a.ID, a.CreatedAt = NewID(PrefixAudience), now()
	return s.creating(ctx, a.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(a).Error, "create audience") })
}

// GetAudience returns a project's audience.
func (s *Store) GetAudience(ctx context.Context, projectID, id string) (*Audience, error) {
	var a Audience
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&a).Error; err != nil {
		return nil, translate(err, "get audience "+id)
	}
	return &a, nil
}

// ListAudiences returns one page of an account's audiences, newest first.
func (s *Store) ListAudiences(ctx context.Context, projectID, accountID string, p Page) ([]Audience, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	return paginate(s.q(ctx).Model(&Audience{}).Where("account_id = ?", accountID), p,
		func(a *Audience) string { return a.ID })
}

// AddAudienceContact makes a contact a member of an audience; adding a member again changes
// nothing. The caller has checked that both belong to the same account.
func (s *Store) AddAudienceContact(ctx context.Context, audienceID, contactID string) error {
	m := AudienceContact{AudienceID: audienceID, ContactID: contactID, ID: NewID(prefixAudienceMembership), AddedAt: now()}
	err := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&m).Error
	return translate(err, "add audience contact")
}

// RemoveAudienceContact removes a member from an audience and reports whether it was one.
func (s *Store) RemoveAudienceContact(ctx context.Context, audienceID, contactID string) (bool, error) {
	res := s.q(ctx).Where("audience_id = ? AND contact_id = ?", audienceID, contactID).Delete(&AudienceContact{})
	return res.RowsAffected > 0, translate(res.Error, "remove audience contact")
}

// ListAudienceContacts returns one page of an audience's contacts, most recently added first.
func (s *Store) ListAudienceContacts(ctx context.Context, audienceID string, p Page) ([]Contact, Cursors, error) {
	members, cur, err := paginate(s.q(ctx).Model(&AudienceContact{}).Where("audience_id = ?", audienceID), p,
		func(m *AudienceContact) string { return m.ID })
	if err != nil || len(members) == 0 {
		return []Contact{}, cur, err
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ContactID
	}
	var cs []Contact
	if err := s.q(ctx).Where("id IN ?", ids).Find(&cs).Error; err != nil {
		return nil, cur, translate(err, "load audience contacts")
	}
	byID := make(map[string]Contact, len(cs))
	for _, c := range cs {
		byID[c.ID] = c
	}
	out := make([]Contact, 0, len(members))
	for _, m := range members {
		if c, ok := byID[m.ContactID]; ok {
			out = append(out, c)
		}
	}
	return out, cur, nil
}

// AudienceMemberNumbers returns the phone numbers of the members of audiences, as they are now.
func (s *Store) AudienceMemberNumbers(ctx context.Context, audienceIDs []string) ([]string, error) {
	var out []string
	if len(audienceIDs) == 0 {
		return out, nil
	}
	err := scan(s.q(ctx).Raw(`SELECT c.phone_number FROM audience_contacts m JOIN contacts c ON c.id = m.contact_id
		WHERE m.audience_id IN ?`, audienceIDs), &out).Error
	return out, translate(err, "audience member numbers")
}

// inChunks runs fn over ids in slices small enough for one statement's parameters.
func inChunks(ids []string, fn func([]string) error) error {
	const chunk = 5000
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		if err := fn(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// ForeignIDs returns those of ids (contact or audience ids, by table) that are not rows of the
// account: missing, another account's or another project's.
func (s *Store) ForeignIDs(ctx context.Context, table, projectID, accountID string, ids []string) ([]string, error) {
	found := make(map[string]bool, len(ids))
	err := inChunks(uniq(ids), func(chunk []string) error {
		var got []string
		err := s.q(ctx).Table(table).Where("id IN ? AND project_id = ? AND account_id = ?", chunk, projectID, accountID).
			Pluck("id", &got).Error
		for _, id := range got {
			found[id] = true
		}
		return translate(err, "find "+table)
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if !found[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// ContactNumbers returns the phone numbers of contacts by id.
func (s *Store) ContactNumbers(ctx context.Context, ids []string) ([]string, error) {
	var out []string
	err := inChunks(uniq(ids), func(chunk []string) error {
		var got []string
		err := s.q(ctx).Model(&Contact{}).Where("id IN ?", chunk).Pluck("phone_number", &got).Error
		out = append(out, got...)
		return translate(err, "contact numbers")
	})
	return out, err
}
