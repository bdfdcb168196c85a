package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// The operator console's API lives under ConsoleAPIPath, apart from the public API: it is
// authenticated by a session cookie instead of an API key, protected against cross-site request
// forgery, and authorised by the signed-in user's role on each project. Its routes are documented
// in web/console-api.yaml. The console's pages (ConsolePath) call it.
const (
	ConsolePath    = "/console"
	ConsoleAPIPath = "/console/api"
	// SessionCookie is the session cookie's name. The __Host- prefix makes browsers accept it only
	// with Secure, Path=/ and no Domain, so a sibling host cannot plant one.
	SessionCookie = "__Host-switchboard_console"
	// CSRFHeader carries the session's CSRF token on every state change.
	CSRFHeader = "X-CSRF-Token"
)

// consoleCSP is the console's Content Security Policy: its own scripts, styles and fetches only,
// images also from data: URLs (the TOTP QR code), never framed.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// consoleStatus maps the console's own error types to their HTTP statuses; handleError consults
// it after statusOf.
var consoleStatus = map[string]int{
	service.TypeInvalidCredentials:     http.StatusUnauthorized,
	service.TypeTOTPRequired:           http.StatusUnauthorized,
	service.TypeInvalidTOTP:            http.StatusUnauthorized,
	service.TypeUnauthenticated:        http.StatusUnauthorized,
	service.TypeSessionExpired:         http.StatusUnauthorized,
	service.TypeForbidden:              http.StatusForbidden,
	service.TypeCSRFFailed:             http.StatusForbidden,
	service.TypePasswordChangeRequired: http.StatusForbidden,
	service.TypeLoginLocked:            http.StatusTooManyRequests,
}

// roleRank orders the roles: a route that needs a role admits it and every higher one.
var roleRank = map[string]int{store.RoleViewer: 1, store.RoleDeveloper: 2, store.RoleOwner: 3}

// consoleAPI is the console's state in a Server.
type consoleAPI struct {
	core *service.Core
	// logins limits sign-in attempts per client address (per instance).
	logins *addrLimiter
	// bridge is the handler that console calls of public operations go through.
	bridge http.Handler
}

// consoleCtx is what a console handler knows of its caller.
type consoleCtx struct {
	session *service.Session
	actor   service.Actor
	// projectID and role are set on the routes under /projects/:project.
	projectID string
	role      string
}

// consoleHandler is a console route's handler.
type consoleHandler func(c echo.Context, cx *consoleCtx) error

// consoleRoute declares a route: minRole is the least role on the route's project ("" for the
// routes that act on the signed-in user only).
type consoleRoute struct {
	method, path, minRole string
	handle                consoleHandler
}

// mountConsole adds the console's API (and, when built, its pages) to e.
func (s *Server) mountConsole(e *echo.Echo, core *service.Core) {
	s.console = &consoleAPI{core: core, logins: newAddrLimiter(rate.Every(6*time.Second), 10), bridge: e}
	api := e.Group(ConsoleAPIPath, consoleHeaders)
	api.POST("/login", s.consoleLogin, sameOrigin)
	for _, r := range s.consoleRoutes() {
		if r.method == bridgeAny {
			api.Any(r.path, s.consoleAuth(r))
			continue
		}
		api.Add(r.method, r.path, s.consoleAuth(r))
	}
	// Anything else under the API answers 404 in the envelope, with the console's headers.
	api.Any("/*", func(echo.Context) error { return echo.ErrNotFound })
	s.mountConsolePages(e)
}

// consoleRoutes lists every console route but sign-in.
func (s *Server) consoleRoutes() []consoleRoute {
	const (
		user      = ""
		viewer    = store.RoleViewer
		developer = store.RoleDeveloper
		owner     = store.RoleOwner
		prj       = "/projects/:project"
	)
	return []consoleRoute{
		{http.MethodPost, "/logout", user, s.consoleLogout},
		{http.MethodGet, "/me", user, s.consoleMe},
		{http.MethodPost, "/me/password", user, s.consoleChangePassword},
		{http.MethodPost, "/me/totp", user, s.consoleBeginTOTP},
		{http.MethodPost, "/me/totp/confirm", user, s.consoleConfirmTOTP},
		{http.MethodPost, "/me/totp/disable", user, s.consoleDisableTOTP},
		{http.MethodGet, "/me/sessions", user, s.consoleSessions},
		{http.MethodDelete, "/me/sessions/:id", user, s.consoleRevokeSession},
		{http.MethodPost, "/projects", user, s.consoleCreateProject},

		{http.MethodGet, prj, viewer, s.consoleProject},
		{http.MethodPost, prj + "/lock", owner, s.consoleLockProject(true)},
		{http.MethodPost, prj + "/unlock", owner, s.consoleLockProject(false)},
		{http.MethodGet, prj + "/members", viewer, s.consoleMembers},
		{http.MethodPost, prj + "/members", owner, s.consoleAddMember},
		{http.MethodPatch, prj + "/members/:user", owner, s.consoleSetMemberRole},
		{http.MethodDelete, prj + "/members/:user", owner, s.consoleRemoveMember},
		{http.MethodGet, prj + "/audit", viewer, s.consoleAudit},

		{http.MethodGet, prj + "/keys", viewer, s.consoleKeys},
		{http.MethodPost, prj + "/keys", developer, s.consoleCreateKey},
		{http.MethodPost, prj + "/keys/:id/revoke", developer, s.consoleRevokeKey},

		{http.MethodGet, prj + "/webhooks", viewer, s.consoleWebhooks},
		{http.MethodPost, prj + "/webhooks", developer, s.consoleSetWebhook},
		{http.MethodGet, prj + "/deliveries", viewer, s.consoleDeliveries},
		{http.MethodGet, prj + "/deliveries/:id", viewer, s.consoleDelivery},
		{http.MethodPost, prj + "/deliveries/:id/replay", developer, s.consoleReplayDelivery},
		{http.MethodPost, prj + "/webhooks/replay", developer, s.consoleReplaySince},
		{http.MethodGet, prj + "/webhooks/:id/secret", developer, s.consoleWebhookSecret},
		{http.MethodPost, prj + "/webhooks/:id/enable", developer, s.consoleEnableWebhook(true)},
		{http.MethodPost, prj + "/webhooks/:id/disable", developer, s.consoleEnableWebhook(false)},
		{http.MethodPost, prj + "/webhooks/:id/rotate-secret", developer, s.consoleRotateWebhook},
		{http.MethodPost, prj + "/webhooks/:id/test", developer, s.consoleTestWebhook},

		{http.MethodGet, prj + "/logs", viewer, s.consoleLogs},
		{http.MethodGet, prj + "/logs/:id", viewer, s.consoleLog},
		{http.MethodGet, prj + "/usage", viewer, s.consoleUsage},
		{http.MethodPost, prj + "/sim/verdicts", developer, s.consoleSimVerdict},
		{http.MethodGet, prj + "/accounts/:account/review", viewer, s.consoleAccountReview},

		// The public API's operations, on the project, with the session's role: viewers read.
		{bridgeAny, prj + "/api/*", viewer, s.consoleBridge},
	}
}

// consoleHeaders sets the console's security headers on every answer of its API.
func consoleHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", consoleCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		return next(c)
	}
}

// sameOrigin refuses a state change that a browser says comes from another site: Sec-Fetch-Site
// other than same-origin, or an Origin header that is not this host. A state change must also be
// JSON (a cross-site form cannot send that without a CORS preflight, which is never granted).
func sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return next(c)
		}
		refuse := func(why string) error {
			return &service.Error{Type: service.TypeCSRFFailed, Message: "Cross-site request refused: " + why + "."}
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			return refuse("the request comes from another site")
		}
		if origin := r.Header.Get("Origin"); origin != "" && origin != "https://"+r.Host {
			return refuse("the Origin header is not this console's")
		}
		if ct := r.Header.Get(echo.HeaderContentType); r.ContentLength != 0 && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
			return &service.Error{Type: "unsupported_media_type", Message: "Request bodies must be application/json."}
		}
		return next(c)
	}
}

// consoleAuth wraps a route: it requires a live session, the CSRF token on every state change,
// a password of the user's own (not a one-time one) except to change it, and the route's role on
// its project; a project the user is not a member of is not_found.
func (s *Server) consoleAuth(r consoleRoute) echo.HandlerFunc {
	return sameOrigin(func(c echo.Context) error {
		req := c.Request()
		if strings.ContainsRune(req.URL.Path, 0) || strings.Contains(req.URL.RawQuery, "%00") {
			return service.Invalid("query", "must not contain NUL characters")
		}
		ck, err := req.Cookie(SessionCookie)
		token := ""
		if err == nil {
			token = ck.Value
		}
		sess, err := s.console.core.Console.Authenticate(req.Context(), token)
		if err != nil {
			if errors.Is(err, &service.Error{Type: service.TypeSessionExpired}) || errors.Is(err, &service.Error{Type: service.TypeUnauthenticated}) {
				clearSessionCookie(c)
			}
			return err
		}
		if req.Method != http.MethodGet && req.Method != http.MethodHead && !service.CheckCSRF(token, req.Header.Get(CSRFHeader)) {
			return &service.Error{Type: service.TypeCSRFFailed, Message: "Missing or wrong " + CSRFHeader + " header: reload the console."}
		}
		if sess.User.PasswordOneTime && r.path != "/me" && r.path != "/me/password" && r.path != "/logout" {
			return &service.Error{Type: service.TypePasswordChangeRequired, Message: "Choose your own password before going on."}
		}
		cx := &consoleCtx{session: sess, actor: service.Actor{UserID: sess.UserID, Email: sess.User.Email, Via: service.ViaConsole,
			IP: clientIP(req), UserAgent: service.CleanText(req.UserAgent(), 512)}}
		if r.minRole != "" {
			cx.projectID = c.Param("project")
			if cx.role, err = s.console.core.Console.Role(req.Context(), cx.projectID, sess.UserID); err != nil {
				return err
			}
			need := r.minRole
			if r.method == bridgeAny && req.Method != http.MethodGet && req.Method != http.MethodHead {
				need = store.RoleDeveloper
			}
			if roleRank[cx.role] < roleRank[need] {
				return &service.Error{Type: service.TypeForbidden, Message: fmt.Sprintf("Your role on this project is %s; this needs %s.", cx.role, need)}
			}
		}
		return r.handle(c, cx)
	})
}

// clientIP is the address the request came from. The console does not trust X-Forwarded-For:
// behind a proxy every client shares the proxy's address for sign-in rate limiting, and the
// lockout per user still applies.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func setSessionCookie(c echo.Context, token string, expires time.Time) {
	c.SetCookie(&http.Cookie{Name: SessionCookie, Value: token, Path: "/", Expires: expires, HttpOnly: true, Secure: true,
		SameSite: http.SameSiteStrictMode})
}

func clearSessionCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true,
		SameSite: http.SameSiteStrictMode})
}

// bind decodes a console request's JSON body into v, refusing unknown fields and trailing data.
func bind(c echo.Context, v any) error {
	raw, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, 64<<10))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &service.Error{Type: "request_too_large", Message: "The request body is larger than 64 KiB."}
		}
		return err
	}
	// PostgreSQL's text cannot hold NUL, and no console field needs it.
	if bytes.Contains(bytes.ToLower(raw), []byte(`\u0000`)) {
		return service.Invalid("body", "must not contain NUL characters")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // no body: no fields
		}
		var unknown string
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			unknown = strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			return service.Invalid(unknown, "is not a recognized field")
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return service.Invalid(typeErr.Field, "must be a "+typeErr.Type.String())
		}
		return &service.Error{Type: service.TypeInvalidJSON, Message: "The request body is not valid JSON."}
	}
	if dec.More() {
		return &service.Error{Type: service.TypeInvalidJSON, Message: "The request body is not valid JSON: unexpected data after the value."}
	}
	return nil
}

// pageOf reads the after, before and limit query parameters of a console list.
func pageOf(c echo.Context) (store.Page, error) {
	p := store.Page{After: c.QueryParam("after"), Before: c.QueryParam("before")}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			return p, service.Invalid("limit", "must be an integer from 1 to 100")
		}
		p.Limit = n
	}
	return p, nil
}

// addrLimiter is a token bucket per client address.
type addrLimiter struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	addrs map[string]*rate.Limiter
}

func newAddrLimiter(limit rate.Limit, burst int) *addrLimiter {
	return &addrLimiter{limit: limit, burst: burst, addrs: map[string]*rate.Limiter{}}
}

// allow takes a token of addr's bucket. The map is emptied when it grows large (every bucket
// then starts full again), which bounds its memory under a flood of addresses.
func (l *addrLimiter) allow(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.addrs) > 10000 {
		l.addrs = map[string]*rate.Limiter{}
	}
	lim := l.addrs[addr]
	if lim == nil {
		lim = rate.NewLimiter(l.limit, l.burst)
		l.addrs[addr] = lim
	}
	return lim.AllowN(now, 1)
}

// errorTypeKey is where handleError leaves the error type it answered with, for the API log.
const errorTypeKey = "switchboard.error_type"

// errorTypeOf is the error type a request was answered with; empty for a success.
func errorTypeOf(c echo.Context) string {
	t, _ := c.Get(errorTypeKey).(string)
	return t
}
