package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
	// QuietHours holds the account's messages outside its sending window, QuietHoursStart to
	// QuietHoursEnd in minutes after the recipient's local midnight (see service.QuietHours).
	QuietHours      bool
	QuietHoursStart int
	QuietHoursEnd   int
	CreatedAt       time.Time
	UpdatedAt       time.Time
	ArchivedAt      *time.Time
}

// The default sending window of quiet hours: 08:00 to 21:00, in minutes after local midnight.
const (
	DefaultQuietHoursStart = 8 * 60
	DefaultQuietHoursEnd   = 21 * 60
)

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
	if a.QuietHoursStart == a.QuietHoursEnd { // unset (an empty window is never stored)
		a.QuietHoursStart, a.QuietHoursEnd = DefaultQuietHoursStart, DefaultQuietHoursEnd
	}
	return s.creating(ctx, a.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(a).Error, "create account") })
}

// GetAccount returns a project's account, archived or not.
//
// On PostgreSQL outside a transaction, it is one statement through pgx with explicit columns (its
// statement cache, no gorm): every authenticated GET /accounts/{id} reads it, and gorm's
// statement building and reflection were about a third of that request's CPU.
func (s *Store) GetAccount(ctx context.Context, projectID, id string) (*Account, error) {
	return s.readAccount(ctx, getAccountPG, "id = ? AND project_id = ?", id, projectID)
}

// readAccount reads one account: on PostgreSQL outside a transaction with statement pg through
// pgx, otherwise through gorm with where; args are the same for both.
func (s *Store) readAccount(ctx context.Context, pg, where string, args ...any) (*Account, error) {
	var a Account
	id := args[0].(string)
	if s.dialect == Postgres && !s.inTx() {
		err := s.pgxConn(ctx, func(c *pgx.Conn) error {
			return c.QueryRow(ctx, pg, args...).Scan(&a.ID, &a.ProjectID, &a.Name, &a.BrandName,
				&a.Organization, &a.TimeZone, &a.QuietHours, &a.QuietHoursStart, &a.QuietHoursEnd, &a.CreatedAt,
				&a.UpdatedAt, &a.ArchivedAt)
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("get account %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return nil, translate(err, "get account "+id)
		}
		a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
		if a.ArchivedAt != nil {
			t := a.ArchivedAt.UTC()
			a.ArchivedAt = &t
		}
		return &a, nil
	}
	if err := s.q(ctx).Where(where, args...).Take(&a).Error; err != nil {
		return nil, translate(err, "get account "+id)
	}
	return &a, nil
}

// accountColumnsPG are the columns readAccount scans, in its order.
const accountColumnsPG = `SELECT id, project_id, name, brand_name, organization, time_zone, quiet_hours, quiet_hours_start,
	quiet_hours_end, created_at, updated_at, archived_at FROM accounts `

// getAccountPG is GetAccount's statement on PostgreSQL; accountByIDPG AccountByID's.
const (
	getAccountPG  = accountColumnsPG + `WHERE id = $1 AND project_id = $2`
	accountByIDPG = accountColumnsPG + `WHERE id = $1`
)

// AccountByID returns an account of any project (for the operator's commands, and AccountCache).
func (s *Store) AccountByID(ctx context.Context, id string) (*Account, error) {
	return s.readAccount(ctx, accountByIDPG, "id = ?", id)
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
		return tx.announceAccount(ctx, a.ID)
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
			if err := tx.announceAccount(ctx, a.ID); err != nil {
				return err
			}
		}
		out = a
		return nil
	})
	return out, err
}

// announceAccount announces that account id changed (see AccountCache): every write to an
// account's row calls it inside the transaction that makes the change.
func (s *Store) announceAccount(ctx context.Context, id string) error {
	return s.announceAuth(ctx, "account:"+id)
}
