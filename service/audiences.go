package service

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/switchboard/switchboard/store"
)

// MaxAudienceName is the longest audience name, in characters (decisions §7).
const MaxAudienceName = 255

// Audiences manages named lists of an account's contacts that blasts target.
type Audiences struct {
	store *store.Store
}

// NewAudiences returns the Audiences service.
func NewAudiences(st *store.Store) (*Audiences, error) {
	if st == nil {
		return nil, errors.New("service: NewAudiences needs a Store")
	}
	return &Audiences{store: st}, nil
}

// Create adds an audience to one of the project's accounts.
func (a *Audiences) Create(ctx context.Context, projectID, accountID, name string) (*store.Audience, error) {
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxAudienceName {
		return nil, Invalid("name", "must be 1 to 255 characters long")
	}
	if hasNUL(&name) {
		return nil, Invalid("name", "must not contain NUL characters (\\u0000)")
	}
	aud := &store.Audience{ProjectID: projectID, AccountID: accountID, Name: name}
	if err := a.store.CreateAudience(ctx, aud); err != nil {
		return nil, err
	}
	return aud, nil
}

// Get returns a project's audience.
func (a *Audiences) Get(ctx context.Context, projectID, id string) (*store.Audience, error) {
	return a.store.GetAudience(ctx, projectID, id)
}

// List returns a page of an account's audiences.
func (a *Audiences) List(ctx context.Context, projectID, accountID string, p store.Page) ([]store.Audience, store.Cursors, error) {
	return a.store.ListAudiences(ctx, projectID, accountID, p)
}

// AddContact makes a contact of the audience's account a member (again: no change). A contact of
// another account or project, like a missing one, is a validation error of the body (422), as
// every other reference to a resource in a request body is; the audience itself is the path's
// resource (404 when not the project's).
func (a *Audiences) AddContact(ctx context.Context, projectID, audienceID, contactID string) (*store.Contact, error) {
	aud, err := a.store.GetAudience(ctx, projectID, audienceID)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetContact(ctx, projectID, contactID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.AccountID != aud.AccountID) {
		return nil, Invalid("id", "is not a contact of the audience's account")
	}
	if err != nil {
		return nil, err
	}
	if err := a.store.AddAudienceContact(ctx, aud.ID, c.ID); err != nil {
		return nil, err
	}
	return c, nil
}

// RemoveContact removes a member from a project's audience; a contact that is not a member is
// not found.
func (a *Audiences) RemoveContact(ctx context.Context, projectID, audienceID, contactID string) (*store.Contact, error) {
	aud, err := a.store.GetAudience(ctx, projectID, audienceID)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetContact(ctx, projectID, contactID)
	if err != nil {
		return nil, err
	}
	ok, err := a.store.RemoveAudienceContact(ctx, aud.ID, c.ID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Errorf(TypeNotFound, "the contact %s is not a member of the audience", contactID)
	}
	return c, nil
}

// Contacts returns a page of a project's audience's members, most recently added first.
func (a *Audiences) Contacts(ctx context.Context, projectID, audienceID string, p store.Page) ([]store.Contact, store.Cursors, error) {
	if _, err := a.store.GetAudience(ctx, projectID, audienceID); err != nil {
		return nil, store.Cursors{}, err
	}
	return a.store.ListAudienceContacts(ctx, audienceID, p)
}
