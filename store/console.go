package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// Type prefixes of the console's records.
const (
	PrefixConsoleUser    = "opr"
	PrefixConsoleSession = "ses"
	PrefixAuditEntry     = "adt"
)

// Console roles on a project, from most to least powerful.
const (
	// RoleOwner may do everything, including managing the project's members and locking it.
	RoleOwner = "owner"
	// RoleDeveloper manages keys, webhooks, numbers and accounts, and reads everything.
	RoleDeveloper = "developer"
	// RoleViewer reads and changes nothing.
	RoleViewer = "viewer"
)

// ConsoleUser is a dashboard user: a person who signs in to the operator console. Dashboard users
// are not the API's users (usr_…), who only use embedded components.
type ConsoleUser struct {
	ID    string
	Email string
	// PasswordHash is argon2id in the PHC string format.
	PasswordHash string
	// PasswordOneTime marks a password another operator set: it must be changed at sign-in.
	PasswordOneTime bool
	// TOTPSecret is the sealed TOTP secret; TOTP is required at sign-in once TOTPEnabledAt is set.
	TOTPSecret    []byte `gorm:"column:totp_secret"`
	TOTPEnabledAt *time.Time
	// TOTPLastStep is the time step of the last accepted code, so a code is accepted once.
	TOTPLastStep int64 `gorm:"column:totp_last_step"`
	FailedLogins int
	LockedUntil  *time.Time
	LastLoginAt  *time.Time
	DisabledAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ConsoleMember is a user's role on a project.
type ConsoleMember struct {
	ProjectID string
	UserID    string
	Role      string
	CreatedAt time.Time
}

// Membership is a project a user belongs to, with their role.
type Membership struct {
	ProjectID   string
	ProjectName string
	Locked      bool
	Role        string
}

// MemberView is a member of a project with their user's particulars.
type MemberView struct {
	UserID      string
	Email       string
	Role        string
	TOTP        bool
	LastLoginAt *time.Time
	Disabled    bool
	CreatedAt   time.Time
}

// ConsoleSession is a signed-in browser. Its cookie holds a secret whose SHA-256 is TokenHash.
type ConsoleSession struct {
	ID         string
	TokenHash  string
	UserID     string
	IP         string
	UserAgent  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	RevokedAt  *time.Time
}

// AuditEntry is one change an operator made: who (ActorID, ActorEmail), what (Action on Target,
// with Detail), when (CreatedAt) and from where (Via, IP, UserAgent).
type AuditEntry struct {
	ID        string
	ProjectID string
	ActorID   string
	// ActorEmail is the console user's email, or "command line (…)" for the CLI.
	ActorEmail string
	Action     string
	Target     string
	// Detail is a JSON object; it never holds a secret.
	Detail    string
	Via       string
	IP        string
	UserAgent string
	CreatedAt time.Time
}

// TableName is the audit table's name.
func (AuditEntry) TableName() string { return "console_audit" }

// CreateConsoleUser inserts a user; an email already taken is ErrDuplicate.
func (s *Store) CreateConsoleUser(ctx context.Context, u *ConsoleUser) error {
	return translate(s.q(ctx).Create(u).Error, "create console user")
}

// GetConsoleUser returns one user.
func (s *Store) GetConsoleUser(ctx context.Context, id string) (*ConsoleUser, error) {
	var u ConsoleUser
	if err := s.q(ctx).Where("id = ?", id).Take(&u).Error; err != nil {
		return nil, translate(err, "get console user")
	}
	return &u, nil
}

// ConsoleUserByEmail returns the user with this (lowercased) email.
func (s *Store) ConsoleUserByEmail(ctx context.Context, email string) (*ConsoleUser, error) {
	var u ConsoleUser
	if err := s.q(ctx).Where("email = ?", email).Take(&u).Error; err != nil {
		return nil, translate(err, "get console user by email")
	}
	return &u, nil
}

// ListConsoleUsers returns every user, oldest first.
func (s *Store) ListConsoleUsers(ctx context.Context) ([]ConsoleUser, error) {
	var out []ConsoleUser
	return out, translate(s.q(ctx).Order("id").Find(&out).Error, "list console users")
}

// UpdateConsoleUser sets fields (column name to value) of a user.
func (s *Store) UpdateConsoleUser(ctx context.Context, id string, fields map[string]any) error {
	res := s.q(ctx).Model(&ConsoleUser{}).Where("id = ?", id).Updates(fields)
	if res.Error != nil {
		return translate(res.Error, "update console user")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("update console user %s: %w", id, ErrNotFound)
	}
	return nil
}

// AcceptTOTPStep records that a TOTP code of time step step was accepted, unless a code of this
// step or a later one already was: it reports whether this one counts.
func (s *Store) AcceptTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	res := s.q(ctx).Exec("UPDATE console_users SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?", step, userID, step)
	if res.Error != nil {
		return false, translate(res.Error, "accept totp step")
	}
	return res.RowsAffected == 1, nil
}

// RecordFailedLogin counts a failed sign-in of a user; the failure that reaches maxFailures in a
// row locks the user until lockUntil. It reports whether the user is now locked.
func (s *Store) RecordFailedLogin(ctx context.Context, userID string, maxFailures int, at, lockUntil time.Time) (bool, error) {
	var locked bool
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Exec("UPDATE console_users SET failed_logins = failed_logins + 1, updated_at = ? WHERE id = ?",
			at, userID).Error; err != nil {
			return translate(err, "count failed login")
		}
		res := tx.q(ctx).Exec(`UPDATE console_users SET locked_until = ?, failed_logins = 0
			WHERE id = ? AND failed_logins >= ?`, lockUntil, userID, maxFailures)
		if res.Error != nil {
			return translate(res.Error, "lock console user")
		}
		locked = res.RowsAffected > 0
		return nil
	})
	return locked, err
}

// RecordLogin notes a successful sign-in: the failure count starts again.
func (s *Store) RecordLogin(ctx context.Context, userID string, at time.Time) error {
	return s.UpdateConsoleUser(ctx, userID, map[string]any{"failed_logins": 0, "locked_until": nil, "last_login_at": at, "updated_at": at})
}

// SetMember gives a user a role on a project, replacing any role they had.
func (s *Store) SetMember(ctx context.Context, m *ConsoleMember) error {
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "project_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"role"}),
	}).Create(m).Error
	return translate(err, "set console member")
}

// RemoveMember takes a user's role on a project away.
func (s *Store) RemoveMember(ctx context.Context, projectID, userID string) error {
	res := s.q(ctx).Where("project_id = ? AND user_id = ?", projectID, userID).Delete(&ConsoleMember{})
	if res.Error != nil {
		return translate(res.Error, "remove console member")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("remove console member: %w", ErrNotFound)
	}
	return nil
}

// MemberRole returns a user's role on a project; ErrNotFound when they have none.
func (s *Store) MemberRole(ctx context.Context, projectID, userID string) (string, error) {
	var m ConsoleMember
	if err := s.q(ctx).Where("project_id = ? AND user_id = ?", projectID, userID).Take(&m).Error; err != nil {
		return "", translate(err, "get console member")
	}
	return m.Role, nil
}

// CountOwners counts a project's owners who may still sign in.
func (s *Store) CountOwners(ctx context.Context, projectID string) (int64, error) {
	var n int64
	err := s.q(ctx).Raw(`SELECT COUNT(*) FROM console_members m JOIN console_users u ON u.id = m.user_id
		WHERE m.project_id = ? AND m.role = ? AND u.disabled_at IS NULL`, projectID, RoleOwner).Row().Scan(&n)
	return n, translate(err, "count owners")
}

// ListMembers returns a project's members, in the order they joined.
func (s *Store) ListMembers(ctx context.Context, projectID string) ([]MemberView, error) {
	var rows []struct {
		UserID        string
		Email         string
		Role          string
		TOTPEnabledAt *time.Time `gorm:"column:totp_enabled_at"`
		LastLoginAt   *time.Time
		DisabledAt    *time.Time
		CreatedAt     time.Time
	}
	err := s.q(ctx).Raw(`SELECT m.user_id, u.email, m.role, u.totp_enabled_at, u.last_login_at, u.disabled_at, m.created_at
		FROM console_members m JOIN console_users u ON u.id = m.user_id WHERE m.project_id = ? ORDER BY m.created_at, u.id`,
		projectID).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "list console members")
	}
	out := make([]MemberView, len(rows))
	for i, r := range rows {
		out[i] = MemberView{UserID: r.UserID, Email: r.Email, Role: r.Role, TOTP: r.TOTPEnabledAt != nil,
			LastLoginAt: r.LastLoginAt, Disabled: r.DisabledAt != nil, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// Memberships returns the projects a user belongs to, with their roles, by project name.
func (s *Store) Memberships(ctx context.Context, userID string) ([]Membership, error) {
	var rows []struct {
		ProjectID   string
		ProjectName string
		LockedAt    *time.Time
		Role        string
	}
	err := s.q(ctx).Raw(`SELECT p.id AS project_id, p.name AS project_name, p.locked_at, m.role
		FROM console_members m JOIN projects p ON p.id = m.project_id WHERE m.user_id = ? ORDER BY p.name, p.id`,
		userID).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "list memberships")
	}
	out := make([]Membership, len(rows))
	for i, r := range rows {
		out[i] = Membership{ProjectID: r.ProjectID, ProjectName: r.ProjectName, Locked: r.LockedAt != nil, Role: r.Role}
	}
	return out, nil
}

// CreateConsoleSession inserts a session.
func (s *Store) CreateConsoleSession(ctx context.Context, cs *ConsoleSession) error {
	return translate(s.q(ctx).Create(cs).Error, "create console session")
}

// ConsoleSessionByToken returns the session whose cookie secret hashes to tokenHash, revoked or
// expired ones included (the caller decides), with its user.
func (s *Store) ConsoleSessionByToken(ctx context.Context, tokenHash string) (*ConsoleSession, *ConsoleUser, error) {
	var cs ConsoleSession
	if err := s.q(ctx).Where("token_hash = ?", tokenHash).Take(&cs).Error; err != nil {
		return nil, nil, translate(err, "get console session")
	}
	u, err := s.GetConsoleUser(ctx, cs.UserID)
	if err != nil {
		return nil, nil, err
	}
	return &cs, u, nil
}

// TouchConsoleSession records a session's latest use.
func (s *Store) TouchConsoleSession(ctx context.Context, id string, at time.Time) error {
	return translate(s.q(ctx).Model(&ConsoleSession{}).Where("id = ?", id).Update("last_seen_at", at).Error, "touch console session")
}

// ListConsoleSessions returns a user's sessions that are neither revoked nor expired at now,
// newest first.
func (s *Store) ListConsoleSessions(ctx context.Context, userID string, now time.Time) ([]ConsoleSession, error) {
	var out []ConsoleSession
	err := s.q(ctx).Where("user_id = ? AND revoked_at IS NULL AND expires_at > ?", userID, now).Order("id DESC").Find(&out).Error
	return out, translate(err, "list console sessions")
}

// RevokeConsoleSessions revokes a user's sessions: the one with id id, or, with id empty, all of
// them but keep (which may be empty). It returns how many it revoked.
func (s *Store) RevokeConsoleSessions(ctx context.Context, userID, id, keep string, at time.Time) (int64, error) {
	q := s.q(ctx).Model(&ConsoleSession{}).Where("user_id = ? AND revoked_at IS NULL", userID)
	if id != "" {
		q = q.Where("id = ?", id)
	} else if keep != "" {
		q = q.Where("id <> ?", keep)
	}
	res := q.Update("revoked_at", at)
	return res.RowsAffected, translate(res.Error, "revoke console sessions")
}

// InsertAudit records an audit entry, setting its id.
func (s *Store) InsertAudit(ctx context.Context, e *AuditEntry) error {
	e.ID = NewID(PrefixAuditEntry)
	if e.Detail == "" {
		e.Detail = "{}"
	}
	return translate(s.q(ctx).Create(e).Error, "insert audit entry")
}

// ListAudit returns one page of a project's audit log, newest first.
func (s *Store) ListAudit(ctx context.Context, projectID string, p Page) ([]AuditEntry, Cursors, error) {
	return paginate(s.q(ctx).Model(&AuditEntry{}).Where("project_id = ?", projectID), p, func(e *AuditEntry) string { return e.ID })
}

// ListUserAudit returns one page of the audit entries a user made to their own user (password,
// TOTP, sessions), newest first.
func (s *Store) ListUserAudit(ctx context.Context, userID string, p Page) ([]AuditEntry, Cursors, error) {
	return paginate(s.q(ctx).Model(&AuditEntry{}).Where("actor_id = ? AND project_id = ''", userID), p,
		func(e *AuditEntry) string { return e.ID })
}
