package service

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Console passwords are hashed with argon2id at OWASP's recommended minimum cost (19 MiB, two
// passes, one thread), stored in the PHC string format so the cost can rise later: a hash
// records its own parameters.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Password length bounds of console users.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 256
)

// HashPassword returns the argon2id PHC string of a password.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("service: password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches an argon2id PHC string, in constant time. A
// malformed hash matches nothing.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<20 || t > 16 {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 || len(want) > 128 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// checkNewPassword refuses a password that is too short or too long.
func checkNewPassword(field, password string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case n < MinPasswordLength:
		return Invalid(field, fmt.Sprintf("must be at least %d characters", MinPasswordLength))
	case len(password) > MaxPasswordLength:
		return Invalid(field, fmt.Sprintf("must be at most %d bytes", MaxPasswordLength))
	}
	return nil
}

// OneTimePassword returns a fresh password for another person to change at first sign-in:
// four groups of five base32 characters (100 bits).
func OneTimePassword() string {
	t := strings.ToLower(rand.Text()[:20])
	return t[:5] + "-" + t[5:10] + "-" + t[10:15] + "-" + t[15:20]
}
