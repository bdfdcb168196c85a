package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm/clause"
)

// PrefixPublishableToken is the TypeID prefix of publishable tokens.
const PrefixPublishableToken = "atk"

// PublishableTokenPrefix starts every publishable token's secret.
const PublishableTokenPrefix = "atok_live_"

// PublishableToken is an account's deprecated publishable token, with which embedded components
// open as any user of the account (?user_id=&token=). Only the SHA-256 of the secret is stored.
type PublishableToken struct {
	ID        string
	ProjectID string
	AccountID string
	Hash      string
	// Hint is the secret's prefix and last four characters, for listings.
	Hint      string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// CreatePublishableToken mints a publishable token for an account and returns it with its secret,
// which is not stored and cannot be shown again.
func (s *Store) CreatePublishableToken(ctx context.Context, accountID string) (*PublishableToken, string, error) {
	var a Account
	if err := s.q(ctx).Where("id = ?", accountID).Take(&a).Error; err != nil {
		return nil, "", translate(err, "get account "+accountID)
	}
	secret := PublishableTokenPrefix + rand.Text() + rand.Text()
	t := &PublishableToken{ID: NewID(PrefixPublishableToken), ProjectID: a.ProjectID, AccountID: a.ID,
		Hash: HashKey(secret), Hint: PublishableTokenPrefix + "…" + secret[len(secret)-4:], CreatedAt: now()}
	if err := s.q(ctx).Create(t).Error; err != nil {
		return nil, "", translate(err, "create publishable token")
	}
	return t, secret, nil
}

// ListPublishableTokens returns an account's publishable tokens, newest first, revoked ones included.
func (s *Store) ListPublishableTokens(ctx context.Context, accountID string) ([]PublishableToken, error) {
	var ts []PublishableToken
	err := s.q(ctx).Where("account_id = ?", accountID).Order("id DESC").Find(&ts).Error
	return ts, translate(err, "list publishable tokens")
}

// RevokePublishableToken revokes a publishable token at once; revoking twice keeps the first time.
func (s *Store) RevokePublishableToken(ctx context.Context, id string) (*PublishableToken, error) {
	if err := s.q(ctx).Model(&PublishableToken{}).Where("id = ? AND revoked_at IS NULL", id).
		Update("revoked_at", now()).Error; err != nil {
		return nil, translate(err, "revoke publishable token")
	}
	var t PublishableToken
	err := s.q(ctx).Where("id = ?", id).Take(&t).Error
	return &t, translate(err, "revoke publishable token")
}

// Viewer is who an embedded component acts for: a user of an account, in its project.
type Viewer struct {
	UserID    string
	AccountID string
	ProjectID string
	// FirstName and LastName are the user's.
	FirstName string
	LastName  *string
	// AccountName is the account's brand name (its name when it has none).
	AccountName string
	// Locked is true when the project is locked.
	Locked bool
}

// viewerQuery reads a user that is not deleted, its account and project.
const viewerQuery = `SELECT u.id AS user_id, u.account_id, u.project_id, u.first_name, u.last_name,
	COALESCE(a.brand_name, a.name) AS account_name, p.locked_at
	FROM users u JOIN accounts a ON a.id = u.account_id JOIN projects p ON p.id = u.project_id
	WHERE u.id = ? AND u.deleted_at IS NULL`

type viewerRow struct {
	UserID, AccountID, ProjectID, FirstName, AccountName string
	LastName                                             *string
	LockedAt                                             *time.Time
}

func (r viewerRow) viewer() *Viewer {
	return &Viewer{UserID: r.UserID, AccountID: r.AccountID, ProjectID: r.ProjectID, FirstName: r.FirstName,
		LastName: r.LastName, AccountName: r.AccountName, Locked: r.LockedAt != nil}
}

// ViewerOfUser returns the viewer a user token names: the user, which must not be deleted and must
// belong to accountID. Anything else is ErrNotFound.
func (s *Store) ViewerOfUser(ctx context.Context, userID, accountID string) (*Viewer, error) {
	var r viewerRow
	res := scan(s.q(ctx).Raw(viewerQuery+` AND u.account_id = ?`, userID, accountID), &r)
	if res.Error != nil {
		return nil, translate(res.Error, "viewer")
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("viewer %s: %w", userID, ErrNotFound)
	}
	return r.viewer(), nil
}

// ViewerOfPublishableToken returns the viewer a publishable token secret and a user id name: the
// token must be unrevoked and the user (not deleted) of the token's account. Anything else is
// ErrNotFound.
func (s *Store) ViewerOfPublishableToken(ctx context.Context, secret, userID string) (*Viewer, error) {
	var r viewerRow
	res := scan(s.q(ctx).Raw(viewerQuery+` AND u.account_id = (SELECT t.account_id FROM publishable_tokens t
		WHERE t.hash = ? AND t.revoked_at IS NULL)`, userID, HashKey(secret)), &r)
	if res.Error != nil {
		return nil, translate(res.Error, "viewer")
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("viewer of publishable token: %w", ErrNotFound)
	}
	return r.viewer(), nil
}

// ProjectOfPublishableToken returns the project of an unrevoked publishable token; ErrNotFound
// when there is none.
func (s *Store) ProjectOfPublishableToken(ctx context.Context, secret string) (string, error) {
	var ids []string
	if err := s.q(ctx).Model(&PublishableToken{}).Where("hash = ? AND revoked_at IS NULL", HashKey(secret)).
		Limit(1).Pluck("project_id", &ids).Error; err != nil {
		return "", translate(err, "publishable token")
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("publishable token: %w", ErrNotFound)
	}
	return ids[0], nil
}

// EmbedOrigin is an origin (scheme://host[:port]) allowed to frame a project's components.
type EmbedOrigin struct {
	ProjectID string
	Origin    string
	CreatedAt time.Time
}

// AddEmbedOrigin allows an origin to frame a project's components; adding it again changes nothing.
func (s *Store) AddEmbedOrigin(ctx context.Context, projectID, origin string) error {
	if _, err := s.GetProject(ctx, projectID); err != nil {
		return err
	}
	err := s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&EmbedOrigin{ProjectID: projectID, Origin: origin, CreatedAt: now()}).Error
	return translate(err, "add embed origin")
}

// RemoveEmbedOrigin withdraws an origin; ErrNotFound when the project did not allow it.
func (s *Store) RemoveEmbedOrigin(ctx context.Context, projectID, origin string) error {
	res := s.q(ctx).Where("project_id = ? AND origin = ?", projectID, origin).Delete(&EmbedOrigin{})
	if res.Error != nil {
		return translate(res.Error, "remove embed origin")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("embed origin %s of %s: %w", origin, projectID, ErrNotFound)
	}
	return nil
}

// EmbedOrigins returns the origins allowed to frame a project's components, in order.
func (s *Store) EmbedOrigins(ctx context.Context, projectID string) ([]string, error) {
	var out []string
	err := s.q(ctx).Model(&EmbedOrigin{}).Where("project_id = ?", projectID).Order("origin").Pluck("origin", &out).Error
	return out, translate(err, "embed origins")
}

// EmbedOriginsOfAccount returns the origins allowed to frame the components of the account's
// project; none for an unknown account.
func (s *Store) EmbedOriginsOfAccount(ctx context.Context, accountID string) ([]string, error) {
	var out []string
	err := s.q(ctx).Raw(`SELECT o.origin FROM embed_origins o JOIN accounts a ON a.project_id = o.project_id
		WHERE a.id = ? ORDER BY o.origin`, accountID).Scan(&out).Error
	return out, translate(err, "embed origins")
}

// WatchAccounts records that this instance serves live streams of the accounts until until, so
// that (on PostgreSQL) their events notify it; see ListenEmbed.
func (s *Store) WatchAccounts(ctx context.Context, accountIDs []string, until time.Time) error {
	if len(accountIDs) == 0 {
		return nil
	}
	values, args := make([]string, len(accountIDs)), make([]any, 0, 2*len(accountIDs))
	for i, id := range uniq(accountIDs) {
		values[i] = "(?, ?)"
		args = append(args, id, until.UTC())
	}
	err := s.q(ctx).Exec(`INSERT INTO embed_watches (account_id, until) VALUES `+strings.Join(values[:len(args)/2], ", ")+`
		ON CONFLICT (account_id) DO UPDATE SET until = excluded.until WHERE embed_watches.until < excluded.until`, args...).Error
	return translate(err, "watch accounts")
}

// PurgeEmbedWatches deletes the watches that ended before t.
func (s *Store) PurgeEmbedWatches(ctx context.Context, t time.Time) error {
	return translate(s.q(ctx).Exec("DELETE FROM embed_watches WHERE until < ?", t.UTC()).Error, "purge embed watches")
}

// EmbedChannel is the PostgreSQL notification channel that names an account whose components'
// data changed: its events (for watched accounts) and its users' read marks.
const EmbedChannel = "switchboard_embed"

// NotifyEmbed tells the instances listening on EmbedChannel that an account's data changed, at
// the commit of the caller's transaction (at once outside one). It does nothing on SQLite, where
// streams poll.
func (s *Store) NotifyEmbed(ctx context.Context, accountID string) error {
	if s.dialect != Postgres {
		return nil
	}
	return translate(s.q(ctx).Exec("SELECT pg_notify(?, ?)", EmbedChannel, accountID).Error, "notify")
}

// ListenEmbed holds a connection that listens on EmbedChannel and calls fn with each notified
// account id until ctx ends or the connection fails (it returns that error; call it again). ready
// is called once the LISTEN is in place. On SQLite it returns ErrNoListen at once.
func (s *Store) ListenEmbed(ctx context.Context, ready func(), fn func(accountID string)) error {
	return s.listen(ctx, []string{EmbedChannel}, ready, func(_, payload string) { fn(payload) })
}

// AccountEventIDs returns the ids of an account's events of the given types minted at or after
// since, oldest first; an index-only read, so that a stream can pick out those it has not sent.
func (s *Store) AccountEventIDs(ctx context.Context, accountID string, types []string, since time.Time) ([]string, error) {
	var ids []string
	err := s.q(ctx).Model(&Event{}).Where("account_id = ? AND type IN ? AND id >= ?", accountID, types, IDAt(PrefixEvent, since)).
		Order("id").Pluck("id", &ids).Error
	return ids, translate(err, "account events")
}

// EventsByID returns events by id, oldest first.
func (s *Store) EventsByID(ctx context.Context, ids []string) ([]Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []Event
	err := s.q(ctx).Where("id IN ?", uniq(ids)).Order("id").Find(&out).Error
	return out, translate(err, "events")
}
