package server

import (
	"encoding/base64"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// consoleUserJSON is the signed-in user as the console shows them.
type consoleUserJSON struct {
	ID                     string     `json:"id"`
	Email                  string     `json:"email"`
	TOTPEnabled            bool       `json:"totp_enabled"`
	PasswordChangeRequired bool       `json:"password_change_required"`
	LastLoginAt            *time.Time `json:"last_login_at"`
}

// membershipJSON is a project the user belongs to.
type membershipJSON struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Locked bool   `json:"locked"`
	Role   string `json:"role"`
}

// meJSON answers sign-in and GET /me: who is signed in, the CSRF token the pages must send with
// every change, and the user's projects.
type meJSON struct {
	User             consoleUserJSON  `json:"user"`
	CSRFToken        string           `json:"csrf_token"`
	SessionExpiresAt time.Time        `json:"session_expires_at"`
	Projects         []membershipJSON `json:"projects"`
	// SimulatedCarrier is true when the default carrier is the simulator, whose reviews the
	// console can decide.
	SimulatedCarrier bool `json:"simulated_carrier"`
}

func (s *Server) me(c echo.Context, sess *service.Session) error {
	ms, err := s.console.core.Console.Memberships(c.Request().Context(), sess.UserID)
	if err != nil {
		return err
	}
	u := sess.User
	out := meJSON{
		User: consoleUserJSON{ID: u.ID, Email: u.Email, TOTPEnabled: u.TOTPEnabledAt != nil,
			PasswordChangeRequired: u.PasswordOneTime, LastLoginAt: u.LastLoginAt},
		CSRFToken: sess.CSRFToken, SessionExpiresAt: sess.ExpiresAt, Projects: make([]membershipJSON, len(ms)),
		SimulatedCarrier: s.console.core.Carriers.Default().Name() == sim.Name,
	}
	for i, m := range ms {
		out.Projects[i] = membershipJSON{ID: m.ProjectID, Name: m.ProjectName, Locked: m.Locked, Role: m.Role}
	}
	return c.JSON(http.StatusOK, out)
}

// consoleLogin signs a user in: POST /console/api/login {email, password, totp_code}. Attempts
// are limited per client address (10 at once, then one every 6 s); failures in a row lock the
// user (see service.ConsoleConfig).
func (s *Server) consoleLogin(c echo.Context) error {
	r := c.Request()
	if !s.console.logins.allow(clientIP(r), s.now()) {
		c.Response().Header().Set("Retry-After", "6")
		return &service.Error{Type: "rate_limited", Message: "Too many sign-in attempts from this address; wait a few seconds."}
	}
	var body struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		TOTPCode string `json:"totp_code"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	sess, token, err := s.console.core.Console.Login(r.Context(), service.LoginParams{Email: body.Email, Password: body.Password,
		TOTPCode: body.TOTPCode, IP: clientIP(r), UserAgent: r.UserAgent()})
	if err != nil {
		return err
	}
	setSessionCookie(c, token, sess.ExpiresAt)
	return s.me(c, sess)
}

func (s *Server) consoleLogout(c echo.Context, cx *consoleCtx) error {
	if err := s.console.core.Console.Logout(c.Request().Context(), cx.actor, cx.session); err != nil {
		return err
	}
	clearSessionCookie(c)
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) consoleMe(c echo.Context, cx *consoleCtx) error { return s.me(c, cx.session) }

func (s *Server) consoleChangePassword(c echo.Context, cx *consoleCtx) error {
	var body struct {
		CurrentPassword string `json:"current_password"`
		NewPassword     string `json:"new_password"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	if err := s.console.core.Console.ChangePassword(c.Request().Context(), cx.actor, cx.session, body.CurrentPassword, body.NewPassword); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// consoleBeginTOTP starts enrolling an authenticator: the secret, its otpauth:// URL and a QR
// code of it as a data: URL.
func (s *Server) consoleBeginTOTP(c echo.Context, cx *consoleCtx) error {
	setup, err := s.console.core.Console.BeginTOTP(c.Request().Context(), cx.session.User)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"secret": setup.Secret, "otpauth_url": setup.URL,
		"qr_code": "data:image/png;base64," + base64.StdEncoding.EncodeToString(setup.QRPNG)})
}

func (s *Server) consoleConfirmTOTP(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Code string `json:"code"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	if err := s.console.core.Console.ConfirmTOTP(c.Request().Context(), cx.actor, cx.session.UserID, body.Code); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) consoleDisableTOTP(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Password string `json:"password"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	if err := s.console.core.Console.DisableTOTP(c.Request().Context(), cx.actor, cx.session.User, body.Password); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// sessionJSON is one of the user's signed-in browsers.
type sessionJSON struct {
	ID         string    `json:"id"`
	IP         string    `json:"ip"`
	UserAgent  string    `json:"user_agent"`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Current    bool      `json:"current"`
}

func (s *Server) consoleSessions(c echo.Context, cx *consoleCtx) error {
	ss, err := s.console.core.Console.Sessions(c.Request().Context(), cx.session.UserID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listJSON(mapSlice(ss, func(x *store.ConsoleSession) sessionJSON {
		return sessionJSON{ID: x.ID, IP: x.IP, UserAgent: x.UserAgent, CreatedAt: x.CreatedAt, LastSeenAt: x.LastSeenAt,
			ExpiresAt: x.ExpiresAt, Current: x.ID == cx.session.ID}
	}), store.Cursors{}))
}

func (s *Server) consoleRevokeSession(c echo.Context, cx *consoleCtx) error {
	if err := s.console.core.Console.RevokeSession(c.Request().Context(), cx.actor, cx.session.UserID, c.Param("id")); err != nil {
		return err
	}
	if c.Param("id") == cx.session.ID {
		clearSessionCookie(c)
	}
	return c.NoContent(http.StatusNoContent)
}

// list is the shape of every console list: the public API's.
type list[T any] struct {
	Data       []T            `json:"data"`
	Pagination paginationJSON `json:"pagination"`
}

type paginationJSON struct {
	NextCursor     *string `json:"next_cursor"`
	PreviousCursor *string `json:"previous_cursor"`
}

func listJSON[T any](data []T, c store.Cursors) list[T] {
	if data == nil {
		data = []T{}
	}
	return list[T]{Data: data, Pagination: paginationJSON{NextCursor: c.Next, PreviousCursor: c.Previous}}
}
