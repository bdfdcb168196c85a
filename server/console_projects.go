package server

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/store"
)

// projectJSON is a project as the console shows it, with the caller's role on it.
type projectJSON struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Locked    bool       `json:"locked"`
	LockedAt  *time.Time `json:"locked_at"`
	CreatedAt time.Time  `json:"created_at"`
	Role      string     `json:"role"`
}

func projectOut(p *store.Project, role string) projectJSON {
	return projectJSON{ID: p.ID, Name: p.Name, Locked: p.LockedAt != nil, LockedAt: p.LockedAt, CreatedAt: p.CreatedAt, Role: role}
}

func (s *Server) consoleCreateProject(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	p, err := s.console.core.Operator.CreateProject(c.Request().Context(), cx.actor, body.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, projectOut(p, store.RoleOwner))
}

func (s *Server) consoleProject(c echo.Context, cx *consoleCtx) error {
	p, err := s.console.core.Operator.Project(c.Request().Context(), cx.projectID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, projectOut(p, cx.role))
}

func (s *Server) consoleLockProject(locked bool) consoleHandler {
	return func(c echo.Context, cx *consoleCtx) error {
		p, err := s.console.core.Operator.SetProjectLocked(c.Request().Context(), cx.actor, cx.projectID, locked)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, projectOut(p, cx.role))
	}
}

// memberJSON is a member of a project.
type memberJSON struct {
	UserID      string     `json:"user_id"`
	Email       string     `json:"email"`
	Role        string     `json:"role"`
	TOTPEnabled bool       `json:"totp_enabled"`
	LastLoginAt *time.Time `json:"last_login_at"`
	Disabled    bool       `json:"disabled"`
	CreatedAt   time.Time  `json:"created_at"`
}

func memberOut(m *store.MemberView) memberJSON {
	return memberJSON{UserID: m.UserID, Email: m.Email, Role: m.Role, TOTPEnabled: m.TOTP, LastLoginAt: m.LastLoginAt,
		Disabled: m.Disabled, CreatedAt: m.CreatedAt}
}

func (s *Server) consoleMembers(c echo.Context, cx *consoleCtx) error {
	ms, err := s.console.core.Console.Members(c.Request().Context(), cx.projectID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listJSON(mapSlice(ms, memberOut), store.Cursors{}))
}

// consoleAddMember adds a member by email; a new user gets a one-time password, shown once.
func (s *Server) consoleAddMember(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Email string `json:"email"`
		Role  string `json:"role"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	m, password, err := s.console.core.Console.AddMember(c.Request().Context(), cx.actor, cx.projectID, body.Email, body.Role)
	if err != nil {
		return err
	}
	out := struct {
		memberJSON
		OneTimePassword *string `json:"one_time_password"`
	}{memberJSON: memberOut(m)}
	if password != "" {
		out.OneTimePassword = &password
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Server) consoleSetMemberRole(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Role string `json:"role"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.console.core.Console.SetMemberRole(ctx, cx.actor, cx.projectID, c.Param("user"), body.Role); err != nil {
		return err
	}
	return s.consoleMembers(c, cx)
}

func (s *Server) consoleRemoveMember(c echo.Context, cx *consoleCtx) error {
	if err := s.console.core.Console.RemoveMember(c.Request().Context(), cx.actor, cx.projectID, c.Param("user")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// auditJSON is one entry of a project's audit log.
type auditJSON struct {
	ID         string          `json:"id"`
	ActorID    string          `json:"actor_id"`
	ActorEmail string          `json:"actor_email"`
	Action     string          `json:"action"`
	Target     string          `json:"target"`
	Detail     json.RawMessage `json:"detail"`
	Via        string          `json:"via"`
	IP         string          `json:"ip"`
	UserAgent  string          `json:"user_agent"`
	CreatedAt  time.Time       `json:"created_at"`
}

func (s *Server) consoleAudit(c echo.Context, cx *consoleCtx) error {
	p, err := pageOf(c)
	if err != nil {
		return err
	}
	es, cur, err := s.console.core.Operator.Audit(c.Request().Context(), cx.projectID, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listJSON(mapSlice(es, func(e *store.AuditEntry) auditJSON {
		return auditJSON{ID: e.ID, ActorID: e.ActorID, ActorEmail: e.ActorEmail, Action: e.Action, Target: e.Target,
			Detail: json.RawMessage(e.Detail), Via: e.Via, IP: e.IP, UserAgent: e.UserAgent, CreatedAt: e.CreatedAt}
	}), cur))
}

// keyJSON is an API key as the console lists it: never its secret.
type keyJSON struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	Demo       bool       `json:"demo"`
	Prefix     string     `json:"prefix"`
	Hint       string     `json:"hint"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func keyOut(k *store.APIKey, lastUsed *time.Time) keyJSON {
	prefix := "sk_live_"
	if k.Kind == store.KeyDemo {
		prefix = "sk_demo_"
	}
	return keyJSON{ID: k.ID, Kind: k.Kind, Demo: k.Kind == store.KeyDemo, Prefix: prefix, Hint: k.Hint, CreatedAt: k.CreatedAt,
		LastUsedAt: lastUsed, RevokedAt: k.RevokedAt}
}

func (s *Server) consoleKeys(c echo.Context, cx *consoleCtx) error {
	ks, err := s.console.core.Operator.Keys(c.Request().Context(), cx.projectID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listJSON(mapSlice(ks, func(k *store.APIKeyUse) keyJSON { return keyOut(&k.APIKey, k.LastUsedAt) }),
		store.Cursors{}))
}

// consoleCreateKey mints a key; the answer carries its secret, which is never shown again.
func (s *Server) consoleCreateKey(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Demo bool `json:"demo"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	k, secret, err := s.console.core.Operator.CreateKey(c.Request().Context(), cx.actor, cx.projectID, body.Demo)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, struct {
		keyJSON
		Secret string `json:"secret"`
	}{keyOut(k, nil), secret})
}

func (s *Server) consoleRevokeKey(c echo.Context, cx *consoleCtx) error {
	k, err := s.console.core.Operator.RevokeKey(c.Request().Context(), cx.actor, cx.projectID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, keyOut(k, nil))
}

// reviewCampaignJSON is a 10DLC campaign or toll-free verification with what the public API does
// not show: its rejection reason and carrier.
type reviewCampaignJSON struct {
	ID              string    `json:"id"`
	Kind            string    `json:"kind"`
	Status          string    `json:"status"`
	RejectionReason *string   `json:"rejection_reason"`
	Description     string    `json:"description"`
	UseCases        []string  `json:"use_cases"`
	PhoneNumberID   *string   `json:"phone_number_id"`
	PhoneNumber     *string   `json:"phone_number"`
	Carrier         string    `json:"carrier"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// consoleAccountReview is an account's archive state and its campaigns of both kinds, newest
// first, with their rejection reasons.
func (s *Server) consoleAccountReview(c echo.Context, cx *consoleCtx) error {
	r, err := s.console.core.Operator.ReviewAccount(c.Request().Context(), cx.projectID, c.Param("account"))
	if err != nil {
		return err
	}
	out := make([]reviewCampaignJSON, 0, len(r.Campaigns)+len(r.TollFree))
	for _, cp := range r.Campaigns {
		out = append(out, reviewCampaignJSON{ID: cp.ID, Kind: "10dlc", Status: cp.Status, RejectionReason: cp.RejectionReason,
			Description: cp.Params.Description, UseCases: orEmptyList(cp.Params.UseCases), Carrier: cp.Carrier,
			CreatedAt: cp.CreatedAt, UpdatedAt: cp.UpdatedAt})
	}
	for _, t := range r.TollFree {
		number := r.Numbers[t.PhoneNumberID]
		out = append(out, reviewCampaignJSON{ID: t.ID, Kind: "toll_free", Status: t.Status, RejectionReason: t.RejectionReason,
			Description: t.Params.Description, UseCases: orEmptyList(t.Params.UseCases), PhoneNumberID: &t.PhoneNumberID,
			PhoneNumber: &number, Carrier: t.Carrier, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return c.JSON(http.StatusOK, map[string]any{"id": r.Account.ID, "archived_at": r.Account.ArchivedAt, "campaigns": out})
}

func orEmptyList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
