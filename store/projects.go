package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Project is a tenant: it holds API keys and contains accounts.
type Project struct {
	ID        string
	Name      string
	LockedAt  *time.Time
	CreatedAt time.Time
}

// APIKey is a project's API key. Only the SHA-256 of the secret is stored.
type APIKey struct {
	ID        string
	ProjectID string
	// Kind is KeyLive or KeyDemo.
	Kind string
	Hash string
	// Hint is the key's prefix and last four characters, for listings.
	Hint      string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Key kinds, told apart by the secret's prefix.
const (
	KeyLive = "live"
	KeyDemo = "demo"
)

// Principal is what an API key authenticates as.
type Principal struct {
	KeyID     string
	ProjectID string
	Demo      bool
	Locked    bool
}

// HashKey returns the stored form of an API key secret.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	// Encoded in place: hex.EncodeToString makes the text twice (a slice, then its string).
	var text [2 * sha256.Size]byte
	hex.Encode(text[:], sum[:])
	return string(text[:])
}

// CreateProject inserts a new project.
func (s *Store) CreateProject(ctx context.Context, name string) (*Project, error) {
	p := &Project{ID: NewID(PrefixProject), Name: name, CreatedAt: now()}
	if err := s.q(ctx).Create(p).Error; err != nil {
		return nil, translate(err, "create project")
	}
	return p, nil
}

// GetProject returns one project.
func (s *Store) GetProject(ctx context.Context, id string) (*Project, error) {
	var p Project
	if err := s.q(ctx).Where("id = ?", id).Take(&p).Error; err != nil {
		return nil, translate(err, "get project")
	}
	return &p, nil
}

// ListProjects returns every project, newest first.
func (s *Store) ListProjects(ctx context.Context) ([]Project, error) {
	var ps []Project
	if err := s.q(ctx).Order("id DESC").Find(&ps).Error; err != nil {
		return nil, translate(err, "list projects")
	}
	return ps, nil
}

// SetProjectLocked locks or unlocks a project; a locked project's keys get 403 platform_locked.
func (s *Store) SetProjectLocked(ctx context.Context, id string, locked bool) (*Project, error) {
	var at *time.Time
	if locked {
		t := now()
		at = &t
	}
	res := s.q(ctx).Model(&Project{}).Where("id = ?", id).Update("locked_at", at)
	if res.Error != nil {
		return nil, translate(res.Error, "lock project")
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("lock project %s: %w", id, ErrNotFound)
	}
	if err := s.announceAuth(ctx, "project:"+id); err != nil {
		return nil, err
	}
	return s.GetProject(ctx, id)
}

// CreateAPIKey mints a key for a project and returns it with its secret, which is not stored and
// cannot be shown again.
func (s *Store) CreateAPIKey(ctx context.Context, projectID string, demo bool) (*APIKey, string, error) {
	if _, err := s.GetProject(ctx, projectID); err != nil {
		return nil, "", err
	}
	kind, prefix := KeyLive, "sk_live_"
	if demo {
		kind, prefix = KeyDemo, "sk_demo_"
	}
	secret := prefix + rand.Text() + rand.Text() // 52 base32 characters, 260 bits
	k := &APIKey{
		ID:        NewID(PrefixAPIKey),
		ProjectID: projectID,
		Kind:      kind,
		Hash:      HashKey(secret),
		Hint:      prefix + "…" + secret[len(secret)-4:],
		CreatedAt: now(),
	}
	if err := s.q(ctx).Create(k).Error; err != nil {
		return nil, "", translate(err, "create api key")
	}
	// No cache holds an unknown key; the announcement is for caches that would remember refusals.
	if err := s.announceAuth(ctx, "key:"+k.Hash); err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// ListAPIKeys returns a project's keys, newest first, revoked ones included.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]APIKey, error) {
	var ks []APIKey
	if err := s.q(ctx).Where("project_id = ?", projectID).Order("id DESC").Find(&ks).Error; err != nil {
		return nil, translate(err, "list api keys")
	}
	return ks, nil
}

// RevokeAPIKey revokes a key at once; revoking twice keeps the first time.
func (s *Store) RevokeAPIKey(ctx context.Context, id string) (*APIKey, error) {
	if err := s.q(ctx).Model(&APIKey{}).Where("id = ? AND revoked_at IS NULL", id).
		Update("revoked_at", now()).Error; err != nil {
		return nil, translate(err, "revoke api key")
	}
	var k APIKey
	if err := s.q(ctx).Where("id = ?", id).Take(&k).Error; err != nil {
		return nil, translate(err, "revoke api key")
	}
	if err := s.announceAuth(ctx, "key:"+k.Hash); err != nil {
		return nil, err
	}
	return &k, nil
}

// Authenticate finds the live (unrevoked) key with this secret and its project's state, asking
// the database every time; AuthCache answers the API's requests from memory.
func (s *Store) Authenticate(ctx context.Context, secret string) (*Principal, error) {
	return s.authenticateHash(ctx, HashKey(secret))
}

// authenticateHash is Authenticate by the key's stored hash.
func (s *Store) authenticateHash(ctx context.Context, hash string) (*Principal, error) {
	var row struct {
		ID        string
		ProjectID string
		Kind      string
		LockedAt  *time.Time
	}
	err := scan(s.q(ctx).Raw(`SELECT k.id, k.project_id, k.kind, p.locked_at
		FROM api_keys k JOIN projects p ON p.id = k.project_id
		WHERE k.hash = ? AND k.revoked_at IS NULL`, hash), &row).Error
	if err != nil {
		return nil, translate(err, "authenticate")
	}
	if row.ID == "" {
		return nil, fmt.Errorf("authenticate: %w", ErrNotFound)
	}
	return &Principal{KeyID: row.ID, ProjectID: row.ProjectID, Demo: row.Kind == KeyDemo, Locked: row.LockedAt != nil}, nil
}

func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
