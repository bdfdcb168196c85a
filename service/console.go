package service

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"image/png"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/switchboard/switchboard/store"
)

// Error types of the console's sign-in and sessions.
const (
	// TypeInvalidCredentials (401): unknown email, wrong password, or a disabled user; the three
	// are not told apart.
	TypeInvalidCredentials = "invalid_credentials"
	// TypeTOTPRequired (401): the password was right and the user has a second factor: send the
	// code too.
	TypeTOTPRequired = "totp_required"
	// TypeInvalidTOTP (401): the authenticator code was wrong or already used.
	TypeInvalidTOTP = "invalid_totp"
	// TypeLoginLocked (429): too many failed sign-ins in a row; the user is locked for a while.
	TypeLoginLocked = "login_locked"
	// TypeUnauthenticated (401): no session, or a revoked one.
	TypeUnauthenticated = "unauthenticated"
	// TypeSessionExpired (401): the session is past its lifetime or was idle too long.
	TypeSessionExpired = "session_expired"
	// TypeForbidden (403): the user's role on the project does not allow this.
	TypeForbidden = "forbidden"
	// TypeCSRFFailed (403): a state change without the session's CSRF token, or from another origin.
	TypeCSRFFailed = "csrf_failed"
	// TypePasswordChangeRequired (403): the user signed in with a one-time password and must set
	// their own before anything else.
	TypePasswordChangeRequired = "password_change_required"
)

// Roles are the console roles, most powerful first.
var Roles = []string{store.RoleOwner, store.RoleDeveloper, store.RoleViewer}

// ConsoleConfig wires the console's users, roles and sessions.
type ConsoleConfig struct {
	// Store is required.
	Store *store.Store
	// SessionTTL is how long a session lasts after sign-in. Defaults to 12 hours.
	SessionTTL time.Duration
	// IdleTimeout ends a session that made no request for this long. Defaults to 2 hours.
	IdleTimeout time.Duration
	// MaxFailedLogins is how many failed sign-ins in a row lock a user. Defaults to 5.
	MaxFailedLogins int
	// LockoutDuration is how long such a user stays locked. Defaults to 15 minutes.
	LockoutDuration time.Duration
	// TOTPIssuer names the installation in authenticator apps. Defaults to "Switchboard".
	TOTPIssuer string
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Console manages dashboard users: their passwords and second factor, their roles per project,
// their sessions and sign-in with rate limiting and lockout. Every change is audited.
type Console struct {
	cfg   ConsoleConfig
	audit auditLog
	// decoy is a hash checked when the email is unknown, so that a sign-in costs the same
	// whether or not the user exists.
	decoy string

	// sealKey seals TOTP secrets; read from the database once.
	sealMu  sync.Mutex
	sealKey []byte
}

// NewConsole returns the console service.
func NewConsole(cfg ConsoleConfig) (*Console, error) {
	if cfg.Store == nil {
		return nil, errors.New("service: NewConsole needs Store")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Hour
	}
	if cfg.MaxFailedLogins <= 0 {
		cfg.MaxFailedLogins = 5
	}
	if cfg.LockoutDuration <= 0 {
		cfg.LockoutDuration = 15 * time.Minute
	}
	if cfg.TOTPIssuer == "" {
		cfg.TOTPIssuer = "Switchboard"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	decoy, err := HashPassword(rand.Text())
	if err != nil {
		return nil, err
	}
	return &Console{cfg: cfg, audit: auditLog{now: cfg.Now}, decoy: decoy}, nil
}

func (c *Console) now() time.Time { return c.cfg.Now().UTC().Truncate(time.Microsecond) }

// Session is a signed-in console user.
type Session struct {
	store.ConsoleSession
	User *store.ConsoleUser
	// CSRFToken must accompany every state change made in this session.
	CSRFToken string
}

// LoginParams is a sign-in attempt.
type LoginParams struct {
	Email    string
	Password string
	// TOTPCode is the authenticator's code, needed once the user has enabled TOTP.
	TOTPCode string
	// IP and UserAgent describe the browser, for the session list and the audit log.
	IP        string
	UserAgent string
}

var errInvalidCredentials = &Error{Type: TypeInvalidCredentials, Message: "The email or password is incorrect."}

// NormalizeEmail trims and lowercases an email address.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Login checks a user's password (and TOTP code) and opens a session; it returns the session and
// the secret for its cookie, which is not stored. MaxFailedLogins failures in a row lock the
// user for LockoutDuration, during which even the right password is refused.
func (c *Console) Login(ctx context.Context, p LoginParams) (*Session, string, error) {
	st := c.cfg.Store
	now := c.now()
	u, err := st.ConsoleUserByEmail(ctx, NormalizeEmail(p.Email))
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.DisabledAt != nil) {
		CheckPassword(c.decoy, p.Password)
		return nil, "", errInvalidCredentials
	}
	if err != nil {
		return nil, "", err
	}
	if u.LockedUntil != nil && now.Before(*u.LockedUntil) {
		return nil, "", c.lockedError(*u.LockedUntil)
	}
	actor := Actor{UserID: u.ID, Email: u.Email, Via: ViaConsole, IP: p.IP, UserAgent: p.UserAgent}
	if !CheckPassword(u.PasswordHash, p.Password) {
		return nil, "", c.failLogin(ctx, u, actor, errInvalidCredentials)
	}
	if u.TOTPEnabledAt != nil {
		if strings.TrimSpace(p.TOTPCode) == "" {
			return nil, "", &Error{Type: TypeTOTPRequired, Message: "Enter the code from your authenticator app."}
		}
		ok, err := c.checkTOTP(ctx, u, p.TOTPCode)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", c.failLogin(ctx, u, actor, &Error{Type: TypeInvalidTOTP, Message: "The authenticator code is incorrect or was already used."})
		}
	}
	token, sum := newSessionToken()
	sess := &store.ConsoleSession{ID: store.NewID(store.PrefixConsoleSession), TokenHash: sum, UserID: u.ID,
		IP: p.IP, UserAgent: CleanText(p.UserAgent, 512), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(c.cfg.SessionTTL)}
	err = st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.RecordLogin(ctx, u.ID, now); err != nil {
			return err
		}
		if err := tx.CreateConsoleSession(ctx, sess); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, actor, "", "session.create", sess.ID, nil)
	})
	if err != nil {
		return nil, "", err
	}
	u.LastLoginAt, u.FailedLogins, u.LockedUntil = &now, 0, nil
	return &Session{ConsoleSession: *sess, User: u, CSRFToken: CSRFToken(token)}, token, nil
}

// failLogin counts a failed sign-in and returns refusal, or the lockout it caused.
func (c *Console) failLogin(ctx context.Context, u *store.ConsoleUser, actor Actor, refusal error) error {
	now := c.now()
	until := now.Add(c.cfg.LockoutDuration)
	locked, err := c.cfg.Store.RecordFailedLogin(ctx, u.ID, c.cfg.MaxFailedLogins, now, until)
	if err != nil {
		return err
	}
	if !locked {
		return refusal
	}
	c.cfg.Logger.Warn("console user locked after failed sign-ins", "user", u.ID, "ip", actor.IP, "until", until)
	if err := c.audit.record(ctx, c.cfg.Store, actor, "", "user.locked", u.ID,
		map[string]any{"failed_logins": c.cfg.MaxFailedLogins, "locked_until": until}); err != nil {
		return err
	}
	return c.lockedError(until)
}

func (c *Console) lockedError(until time.Time) *Error {
	return &Error{Type: TypeLoginLocked, Message: fmt.Sprintf("Too many failed sign-ins: this user is locked until %s.",
		until.UTC().Format(time.RFC3339)), Detail: map[string]any{"locked_until": until.UTC().Format(time.RFC3339)}}
}

// newSessionToken returns a session cookie's secret and the hash the store keeps.
func newSessionToken() (token, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CSRFToken derives a session's CSRF token from its cookie secret: only the session's own pages,
// which read it from the console API, can send it; another site can neither read the cookie nor
// the token.
func CSRFToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("switchboard console csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports, in constant time, whether token is the session's CSRF token.
func CheckCSRF(sessionToken, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(CSRFToken(sessionToken)), []byte(token)) == 1
}

// Authenticate returns the session of a cookie's secret: refused when unknown or revoked
// (unauthenticated), past its lifetime or idle for IdleTimeout (session_expired), or when its
// user was disabled.
func (c *Console) Authenticate(ctx context.Context, token string) (*Session, error) {
	if token == "" || len(token) > 100 {
		return nil, &Error{Type: TypeUnauthenticated, Message: "Sign in to the console."}
	}
	sess, u, err := c.cfg.Store.ConsoleSessionByToken(ctx, hashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Type: TypeUnauthenticated, Message: "Sign in to the console."}
	}
	if err != nil {
		return nil, err
	}
	now := c.now()
	switch {
	case sess.RevokedAt != nil || u.DisabledAt != nil:
		return nil, &Error{Type: TypeUnauthenticated, Message: "This session was signed out. Sign in again."}
	case !now.Before(sess.ExpiresAt) || now.Sub(sess.LastSeenAt) >= c.cfg.IdleTimeout:
		return nil, &Error{Type: TypeSessionExpired, Message: "Your session has expired. Sign in again."}
	}
	// The last use is written at most once a minute: enough for the idle timeout and the list.
	if now.Sub(sess.LastSeenAt) >= time.Minute {
		if err := c.cfg.Store.TouchConsoleSession(ctx, sess.ID, now); err != nil {
			return nil, err
		}
		sess.LastSeenAt = now
	}
	return &Session{ConsoleSession: *sess, User: u, CSRFToken: CSRFToken(token)}, nil
}

// Logout revokes the session.
func (c *Console) Logout(ctx context.Context, a Actor, s *Session) error {
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if _, err := tx.RevokeConsoleSessions(ctx, s.UserID, s.ID, "", c.now()); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, "", "session.revoke", s.ID, nil)
	})
}

// Sessions lists a user's open sessions, newest first.
func (c *Console) Sessions(ctx context.Context, userID string) ([]store.ConsoleSession, error) {
	return c.cfg.Store.ListConsoleSessions(ctx, userID, c.now())
}

// RevokeSession signs one of the user's sessions out; another user's session is not_found.
func (c *Console) RevokeSession(ctx context.Context, a Actor, userID, id string) error {
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		n, err := tx.RevokeConsoleSessions(ctx, userID, id, "", c.now())
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("revoke session %s: %w", id, store.ErrNotFound)
		}
		return c.audit.record(ctx, tx, a, "", "session.revoke", id, nil)
	})
}

// ChangePassword sets a user's password after checking the current one (a one-time password
// too), and signs every other session of theirs out.
func (c *Console) ChangePassword(ctx context.Context, a Actor, s *Session, current, next string) error {
	if !CheckPassword(s.User.PasswordHash, current) {
		return Invalid("current_password", "is incorrect")
	}
	if err := checkNewPassword("new_password", next); err != nil {
		return err
	}
	if current == next {
		return Invalid("new_password", "must differ from the current password")
	}
	hash, err := HashPassword(next)
	if err != nil {
		return err
	}
	now := c.now()
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.UpdateConsoleUser(ctx, s.UserID, map[string]any{"password_hash": hash, "password_one_time": false,
			"updated_at": now}); err != nil {
			return err
		}
		if _, err := tx.RevokeConsoleSessions(ctx, s.UserID, "", s.ID, now); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, "", "user.password_change", s.UserID, nil)
	})
}

// TOTPSetup is a second factor waiting for its first code: the secret to type in, the otpauth://
// URL, and that URL as a QR code (PNG).
type TOTPSetup struct {
	Secret string
	URL    string
	QRPNG  []byte
}

// BeginTOTP starts enrolling the user's authenticator: a new secret, kept sealed, that counts
// once ConfirmTOTP has seen a code of it.
func (c *Console) BeginTOTP(ctx context.Context, u *store.ConsoleUser) (*TOTPSetup, error) {
	if u.TOTPEnabledAt != nil {
		return nil, Errorf(TypeConflict, "two-factor authentication is already on; turn it off first")
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: c.cfg.TOTPIssuer, AccountName: u.Email})
	if err != nil {
		return nil, fmt.Errorf("service: totp key: %w", err)
	}
	sealed, err := c.sealSecret(ctx, key.Secret())
	if err != nil {
		return nil, err
	}
	if err := c.cfg.Store.UpdateConsoleUser(ctx, u.ID, map[string]any{"totp_secret": sealed, "totp_enabled_at": nil,
		"totp_last_step": 0, "updated_at": c.now()}); err != nil {
		return nil, err
	}
	img, err := key.Image(240, 240)
	if err != nil {
		return nil, fmt.Errorf("service: totp qr code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("service: totp qr code: %w", err)
	}
	return &TOTPSetup{Secret: key.Secret(), URL: key.URL(), QRPNG: buf.Bytes()}, nil
}

// ConfirmTOTP turns the second factor on once code matches the secret BeginTOTP made.
func (c *Console) ConfirmTOTP(ctx context.Context, a Actor, userID, code string) error {
	u, err := c.cfg.Store.GetConsoleUser(ctx, userID)
	if err != nil {
		return err
	}
	if u.TOTPEnabledAt != nil {
		return Errorf(TypeConflict, "two-factor authentication is already on")
	}
	if len(u.TOTPSecret) == 0 {
		return Errorf(TypeConflict, "start the authenticator setup first")
	}
	ok, err := c.checkTOTP(ctx, u, code)
	if err != nil {
		return err
	}
	if !ok {
		return Invalid("code", "does not match the authenticator's current code")
	}
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.UpdateConsoleUser(ctx, userID, map[string]any{"totp_enabled_at": c.now(), "updated_at": c.now()}); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, "", "user.totp_enable", userID, nil)
	})
}

// DisableTOTP turns the second factor off, after checking the user's password.
func (c *Console) DisableTOTP(ctx context.Context, a Actor, u *store.ConsoleUser, password string) error {
	if !CheckPassword(u.PasswordHash, password) {
		return Invalid("password", "is incorrect")
	}
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.UpdateConsoleUser(ctx, u.ID, map[string]any{"totp_secret": nil, "totp_enabled_at": nil,
			"updated_at": c.now()}); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, "", "user.totp_disable", u.ID, nil)
	})
}

// totpOpts are the authenticator apps' defaults: 6 digits every 30 s, SHA-1.
var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// checkTOTP accepts a code of the current 30-second step or either neighbour (clock skew), once:
// a code whose step is not after the last accepted one is refused, so a code seen over a
// shoulder cannot be replayed.
func (c *Console) checkTOTP(ctx context.Context, u *store.ConsoleUser, code string) (bool, error) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != 6 || len(u.TOTPSecret) == 0 {
		return false, nil
	}
	secret, err := c.unsealSecret(ctx, u.TOTPSecret)
	if err != nil {
		return false, err
	}
	now := c.cfg.Now()
	for _, skew := range []int64{0, -1, 1} {
		at := now.Add(time.Duration(skew*30) * time.Second)
		want, err := totp.GenerateCodeCustom(secret, at, totpOpts)
		if err != nil {
			return false, fmt.Errorf("service: totp code: %w", err)
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return c.cfg.Store.AcceptTOTPStep(ctx, u.ID, at.Unix()/30)
		}
	}
	return false, nil
}

// sealSecret encrypts a TOTP secret with AES-GCM under an installation secret.
func (c *Console) sealSecret(ctx context.Context, secret string) ([]byte, error) {
	aead, err := c.cipher(ctx)
	if err != nil {
		return nil, err
	}
	return sealWith(aead, []byte(secret)), nil
}

func (c *Console) unsealSecret(ctx context.Context, sealed []byte) (string, error) {
	aead, err := c.cipher(ctx)
	if err != nil {
		return "", err
	}
	b, err := openWith(aead, sealed, "totp secret")
	return string(b), err
}

// sealWith encrypts plain under aead with a fresh random nonce, which leads the result.
func sealWith(aead cipher.AEAD, plain []byte) []byte {
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, plain, nil)
}

// openWith decrypts what sealWith sealed; what names it in errors.
func openWith(aead cipher.AEAD, sealed []byte, what string) ([]byte, error) {
	if len(sealed) < aead.NonceSize() {
		return nil, fmt.Errorf("service: sealed %s too short", what)
	}
	b, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
	if err != nil {
		return nil, fmt.Errorf("service: open sealed %s: %w", what, err)
	}
	return b, nil
}

func (c *Console) cipher(ctx context.Context) (cipher.AEAD, error) {
	c.sealMu.Lock()
	if c.sealKey == nil {
		k, err := c.cfg.Store.InstallationSecret(ctx, "console_totp", 32)
		if err != nil {
			c.sealMu.Unlock()
			return nil, err
		}
		c.sealKey = k
	}
	key := c.sealKey
	c.sealMu.Unlock()
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("service: totp cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// --- Members ---------------------------------------------------------------------------

// Memberships lists the projects a user belongs to, with their roles.
func (c *Console) Memberships(ctx context.Context, userID string) ([]store.Membership, error) {
	return c.cfg.Store.Memberships(ctx, userID)
}

// Role returns a user's role on a project; a project they are not a member of is not_found, as
// if it did not exist.
func (c *Console) Role(ctx context.Context, projectID, userID string) (string, error) {
	return c.cfg.Store.MemberRole(ctx, projectID, userID)
}

// Members lists a project's members.
func (c *Console) Members(ctx context.Context, projectID string) ([]store.MemberView, error) {
	return c.cfg.Store.ListMembers(ctx, projectID)
}

func checkRole(role string) error {
	if !slices.Contains(Roles, role) {
		return Invalid("role", "must be owner, developer or viewer")
	}
	return nil
}

// AddMember gives the user with this email a role on a project. A new email becomes a user with
// a one-time password, returned (it is not stored) for the caller to pass on; for an existing
// user it is empty and their role is set.
func (c *Console) AddMember(ctx context.Context, a Actor, projectID, email, role string) (*store.MemberView, string, error) {
	email = NormalizeEmail(email)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		return nil, "", Invalid("email", "is not a valid email address")
	}
	if err := checkRole(role); err != nil {
		return nil, "", err
	}
	if _, err := c.cfg.Store.GetProject(ctx, projectID); err != nil {
		return nil, "", err
	}
	var password string
	now := c.now()
	err := c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		u, err := tx.ConsoleUserByEmail(ctx, email)
		if errors.Is(err, store.ErrNotFound) {
			password = OneTimePassword()
			hash, err := HashPassword(password)
			if err != nil {
				return err
			}
			u = &store.ConsoleUser{ID: store.NewID(store.PrefixConsoleUser), Email: email, PasswordHash: hash,
				PasswordOneTime: true, CreatedAt: now, UpdatedAt: now}
			if err := tx.CreateConsoleUser(ctx, u); err != nil {
				return err
			}
			if err := c.audit.record(ctx, tx, a, projectID, "user.create", u.ID, map[string]any{"email": email}); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if prev, err := tx.MemberRole(ctx, projectID, u.ID); err == nil && prev == store.RoleOwner && role != store.RoleOwner {
			if err := c.keepAnOwner(ctx, tx, projectID); err != nil {
				return err
			}
		}
		if err := tx.SetMember(ctx, &store.ConsoleMember{ProjectID: projectID, UserID: u.ID, Role: role, CreatedAt: now}); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, projectID, "member.set", u.ID, map[string]any{"email": email, "role": role})
	})
	if err != nil {
		return nil, "", err
	}
	ms, err := c.cfg.Store.ListMembers(ctx, projectID)
	if err != nil {
		return nil, "", err
	}
	for i := range ms {
		if ms[i].Email == email {
			return &ms[i], password, nil
		}
	}
	return nil, "", fmt.Errorf("service: member %s vanished", email)
}

// SetMemberRole changes a member's role; the project keeps at least one owner.
func (c *Console) SetMemberRole(ctx context.Context, a Actor, projectID, userID, role string) error {
	if err := checkRole(role); err != nil {
		return err
	}
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		prev, err := tx.MemberRole(ctx, projectID, userID)
		if err != nil {
			return err
		}
		if prev == store.RoleOwner && role != store.RoleOwner {
			if err := c.keepAnOwner(ctx, tx, projectID); err != nil {
				return err
			}
		}
		if err := tx.SetMember(ctx, &store.ConsoleMember{ProjectID: projectID, UserID: userID, Role: role, CreatedAt: c.now()}); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, projectID, "member.set", userID, map[string]any{"role": role, "previous_role": prev})
	})
}

// RemoveMember takes a member off a project; the project keeps at least one owner.
func (c *Console) RemoveMember(ctx context.Context, a Actor, projectID, userID string) error {
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		prev, err := tx.MemberRole(ctx, projectID, userID)
		if err != nil {
			return err
		}
		if prev == store.RoleOwner {
			if err := c.keepAnOwner(ctx, tx, projectID); err != nil {
				return err
			}
		}
		if err := tx.RemoveMember(ctx, projectID, userID); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, projectID, "member.remove", userID, map[string]any{"previous_role": prev})
	})
}

// keepAnOwner refuses a change that would take away the project's last owner.
func (c *Console) keepAnOwner(ctx context.Context, tx *store.Store, projectID string) error {
	n, err := tx.CountOwners(ctx, projectID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return Errorf(TypeConflict, "a project keeps at least one owner: make another member owner first")
	}
	return nil
}

// Users lists every console user (the command line's `console user list`).
func (c *Console) Users(ctx context.Context) ([]store.ConsoleUser, error) {
	return c.cfg.Store.ListConsoleUsers(ctx)
}

// ResetPassword gives a user a new one-time password (returned, not stored), unlocks them and
// signs all their sessions out: the command line's way back in for an operator who forgot theirs.
func (c *Console) ResetPassword(ctx context.Context, a Actor, email string) (string, error) {
	password := OneTimePassword()
	hash, err := HashPassword(password)
	if err != nil {
		return "", err
	}
	now := c.now()
	err = c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		u, err := tx.ConsoleUserByEmail(ctx, NormalizeEmail(email))
		if err != nil {
			return err
		}
		if err := tx.UpdateConsoleUser(ctx, u.ID, map[string]any{"password_hash": hash, "password_one_time": true,
			"failed_logins": 0, "locked_until": nil, "updated_at": now}); err != nil {
			return err
		}
		if _, err := tx.RevokeConsoleSessions(ctx, u.ID, "", "", now); err != nil {
			return err
		}
		return c.audit.record(ctx, tx, a, "", "user.password_reset", u.ID, nil)
	})
	return password, err
}

// CleanText makes text from a request safe to store: valid UTF-8 without NUL bytes (which
// PostgreSQL's text refuses), cut to at most n bytes.
func CleanText(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
