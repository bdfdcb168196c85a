package store

import (
	"context"
	"fmt"
	"time"
)

// Account is a messaging brand inside a project.
type Account struct {
	ID        string
	ProjectID string
	Name      string
	BrandName *string
	// Organization is the legal entity as a JSON object; the store does not interpret it.
	Organization string
	TimeZone     *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ArchivedAt   *time.Time
}

// AccountPatch lists the fields an update changes; nil fields are left alone.
type AccountPatch struct {
	Name *string
	// BrandName is set when SetBrandName is true; a nil BrandName then clears it (the name again).
	SetBrandName bool
	BrandName    *string
	Organization *string
	// TimeZone is set when SetTimeZone is true; a nil TimeZone then clears it.
	SetTimeZone bool
	TimeZone    *string
}

// CreateAccount inserts an account into a project.
// It records the account with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) CreateAccount(ctx context.Context, a *Account) error {
	a.ID = NewID(PrefixAccount)
	a.CreatedAt = now()
	a.UpdatedAt = a.CreatedAt
	if a.Organization == "" {
		a.Organization = "{}"
	}
	return s.creating(ctx, a.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(a).Error, "create account") })
}

// GetAccount returns a project's account, archived or not.
func (s *Store) GetAccount(ctx context.Context, projectID, id string) (*Account, error) {
	var a Account
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&a).Error; err != nil {
		return nil, translate(err, "get account "+id)
	}
	return &a, nil
}

// ListAccounts returns one page of a project's accounts.
func (s *Store) ListAccounts(ctx context.Context, projectID string, p Page) ([]Account, Cursors, error) {
	return paginate(s.q(ctx).Model(&Account{}).Where("project_id = ?", projectID), p,
		func(a *Account) string { return a.ID })
}

// UpdateAccount applies a patch inside one transaction and returns the result. fn, when not nil,
// sees the current row first and may refuse the update by returning an error.
func (s *Store) UpdateAccount(ctx context.Context, projectID, id string, patch AccountPatch, check func(*Account) error) (*Account, error) {
	var out *Account
	err := s.Tx(ctx, func(tx *Store) error {
		a, err := tx.GetAccount(ctx, projectID, id)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(a); err != nil {
				return err
			}
		}
		if patch.Name != nil {
			a.Name = *patch.Name
		}
		if patch.SetBrandName {
			a.BrandName = patch.BrandName
		}
		if patch.Organization != nil {
			a.Organization = *patch.Organization
		}
		if patch.SetTimeZone {
			a.TimeZone = patch.TimeZone
		}
		a.UpdatedAt = now()
		if err := tx.q(ctx).Select("*").Updates(a).Error; err != nil {
			return translate(err, "update account")
		}
		out = a
		return nil
	})
	return out, err
}

// ArchiveAccount marks an account archived (once; archiving again returns it unchanged).
// onArchive, when not nil, runs in the same transaction when the account becomes archived: it
// releases the account's numbers and ends its campaigns (service.Numbers.ArchiveAccount).
func (s *Store) ArchiveAccount(ctx context.Context, projectID, id string, onArchive func(tx *Store, a *Account) error) (*Account, error) {
	var out *Account
	err := s.Tx(ctx, func(tx *Store) error {
		a, err := tx.GetAccount(ctx, projectID, id)
		if err != nil {
			return err
		}
		if a.ArchivedAt == nil {
			t := now()
			a.ArchivedAt, a.UpdatedAt = &t, t
			if err := tx.q(ctx).Model(a).Updates(map[string]any{"archived_at": t, "updated_at": t}).Error; err != nil {
				return translate(err, fmt.Sprintf("archive account %s", id))
			}
			if onArchive != nil {
				if err := onArchive(tx, a); err != nil {
					return err
				}
			}
		}
		out = a
		return nil
	})
	return out, err
}
