package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"time"
)

// SigningKey is an Ed25519 key that signs user tokens. It lives in the database so that every
// instance of an installation signs and verifies with the same keys.
type SigningKey struct {
	ID        string
	Seed      []byte
	CreatedAt time.Time
}

// PrivateKey returns the key's Ed25519 private key.
func (k *SigningKey) PrivateKey() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(k.Seed) }

// SigningKeys returns the installation's signing keys, newest first, creating the first one if
// there is none.
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	var keys []SigningKey
	if err := s.q(ctx).Order("created_at DESC, id DESC").Find(&keys).Error; err != nil {
		return nil, translate(err, "list signing keys")
	}
	if len(keys) > 0 {
		return keys, nil
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, fmt.Errorf("store: signing key seed: %w", err)
	}
	k := SigningKey{ID: NewID("sig"), Seed: seed, CreatedAt: now()}
	// Two instances may race to create the first key; both keys are then valid and the newest signs.
	if err := s.q(ctx).Create(&k).Error; err != nil {
		return nil, translate(err, "create signing key")
	}
	return s.SigningKeys(ctx)
}
