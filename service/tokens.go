package service

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchboard/switchboard/store"
)

// Token lifetimes, from the spec.
const (
	TokenMinSeconds     = 15
	TokenMaxSeconds     = 3600
	TokenDefaultSeconds = 900
)

// TokenStore is what Tokens needs from the database.
type TokenStore interface {
	SigningKeys(ctx context.Context) ([]store.SigningKey, error)
	UserActive(ctx context.Context, id string) (bool, error)
}

// Tokens issues and verifies the short-lived EdDSA JWTs that embedded components use.
type Tokens struct {
	store  TokenStore
	issuer string
	now    func() time.Time

	mu   sync.Mutex
	keys []store.SigningKey
}

// NewTokens returns a token service. issuer is the installation's public URL (the iss claim);
// now is the clock.
func NewTokens(st TokenStore, issuer string, now func() time.Time) (*Tokens, error) {
	if st == nil || now == nil {
		return nil, errors.New("service: NewTokens needs a store and a clock")
	}
	return &Tokens{store: st, issuer: issuer, now: now}, nil
}

// Claims are the claims of a user token.
type Claims struct {
	jwt.RegisteredClaims
	// Account is the id of the user's account.
	Account string `json:"acct"`
}

func (t *Tokens) signingKeys(ctx context.Context) ([]store.SigningKey, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys == nil {
		keys, err := t.store.SigningKeys(ctx)
		if err != nil {
			return nil, err
		}
		t.keys = keys
	}
	return t.keys, nil
}

// Issue signs a token for a user, valid for seconds (TokenMinSeconds..TokenMaxSeconds).
func (t *Tokens) Issue(ctx context.Context, userID, accountID string, seconds int) (string, error) {
	if seconds < TokenMinSeconds || seconds > TokenMaxSeconds {
		return "", Invalid("duration_seconds", fmt.Sprintf("must be between %d and %d", TokenMinSeconds, TokenMaxSeconds))
	}
	keys, err := t.signingKeys(ctx)
	if err != nil {
		return "", err
	}
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	iat := t.now().Truncate(time.Second)
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    t.issuer,
			Subject:   userID,
			IssuedAt:  jwt.NewNumericDate(iat),
			ExpiresAt: jwt.NewNumericDate(iat.Add(time.Duration(seconds) * time.Second)),
			ID:        base64.RawURLEncoding.EncodeToString(jti),
		},
		Account: accountID,
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = keys[0].ID
	signed, err := tok.SignedString(keys[0].PrivateKey())
	if err != nil {
		return "", fmt.Errorf("service: sign token: %w", err)
	}
	return signed, nil
}

// ErrTokenInvalid means a token is malformed, badly signed, expired, or its user was deleted.
var ErrTokenInvalid = errors.New("service: invalid token")

// ErrTokenExpired is the ErrTokenInvalid of a token that is valid but for its expiry.
var ErrTokenExpired = errors.New("service: token expired")

// Verify checks a token's signature, expiry and issuer, and that its user still exists.
func (t *Tokens) Verify(ctx context.Context, raw string) (*Claims, error) {
	keys, err := t.signingKeys(ctx)
	if err != nil {
		return nil, err
	}
	var claims Claims
	_, err = jwt.ParseWithClaims(raw, &claims, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		for _, k := range keys {
			if k.ID == kid {
				return k.PrivateKey().Public(), nil
			}
		}
		return nil, fmt.Errorf("unknown key id %q", kid)
	}, jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithIssuer(t.issuer),
		jwt.WithTimeFunc(t.now), jwt.WithExpirationRequired())
	if errors.Is(err, jwt.ErrTokenExpired) {
		return nil, fmt.Errorf("%w: %w: %v", ErrTokenInvalid, ErrTokenExpired, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenInvalid, err)
	}
	active, err := t.store.UserActive(ctx, claims.Subject)
	if err != nil {
		return nil, err
	}
	if !active {
		return nil, fmt.Errorf("%w: user %s no longer exists", ErrTokenInvalid, claims.Subject)
	}
	return &claims, nil
}

// JWK is one public key in the JSON Web Key Set.
type JWK struct {
	Kty, Crv, X, Kid, Alg, Use string
}

// PublicKeys returns the verification keys, for /.well-known/jwks.json.
func (t *Tokens) PublicKeys(ctx context.Context) ([]JWK, error) {
	keys, err := t.signingKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]JWK, 0, len(keys))
	for _, k := range keys {
		pub := k.PrivateKey().Public().(ed25519.PublicKey)
		out = append(out, JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: k.ID, Alg: "EdDSA", Use: "sig"})
	}
	return out, nil
}
