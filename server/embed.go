package server

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
	"github.com/switchboard/switchboard/web"
)

// EmbedConfig configures the embeddable components: their pages under /embed/, their loader
// /embed/v1.js, and their own API under /embed/api/, which is not the public API (see
// web/embed-api.yaml).
type EmbedConfig struct {
	// RateLimit is the sustained component API requests per second allowed per user (per
	// instance). Defaults to 20; negative disables.
	RateLimit float64
	// RateBurst is the token bucket's size. Defaults to 60.
	RateBurst int
	// MaxStreams is how many live streams one user may hold open on one instance (each component on a page holds one). Defaults to 10.
	MaxStreams int
	// Heartbeat is how often an idle live stream sends a comment, so that proxies keep it open.
	// Defaults to 20 s.
	Heartbeat time.Duration
	// Demo, when set, serves the demo host page /embed/demo and a token endpoint for it: for local
	// development only (switchboard serve --dev-key). Defaults to nil: no demo.
	Demo *EmbedDemo
}

// EmbedDemo is the local demo of the components: a host page that embeds them for one user, as
// a customer's app would, and gets fresh tokens for that user from /embed/demo/token.
type EmbedDemo struct {
	// UserID and AccountID are the demo user's.
	UserID, AccountID string
	// Secret authorises /embed/demo/token (header X-Demo-Secret); it travels in the demo link's
	// fragment, never to a server log.
	Secret string
}

// DeprecationDate is when publishable tokens were deprecated, as the Deprecation header (RFC
// 9745) gives it.
const deprecationHeader = "@1767225600" // 2026-01-01T00:00:00Z

// embedComponents are the component pages under /embed/.
var embedComponents = map[string]bool{"inbox": true, "conversation": true, "unread": true}

// components serves the embeddable components; see registerEmbed.
type components struct {
	s      *Server
	cfg    EmbedConfig
	inbox  *service.Inbox
	rates  *rateLimiter
	mu     sync.Mutex
	open   map[string]int // live streams per user
	ending chan struct{}  // closed when the live streams open now must end (a shutdown)
	gz     sync.Map       // file name → its gzip
}

// registerEmbed adds the components' routes to e.
func (s *Server) registerEmbed(e *echo.Echo, cfg EmbedConfig, inbox *service.Inbox) {
	if cfg.RateLimit == 0 {
		cfg.RateLimit = 20
	}
	if cfg.RateBurst == 0 {
		cfg.RateBurst = 60
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = 10
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 20 * time.Second
	}
	m := &components{s: s, cfg: cfg, inbox: inbox, open: map[string]int{}, ending: make(chan struct{}),
		rates: &rateLimiter{limit: rate.Limit(cfg.RateLimit), burst: cfg.RateBurst, keys: map[string]*rate.Limiter{}}}
	s.components = m
	e.GET("/embed/v1.js", m.loader)
	e.GET("/ui/assets/*", m.asset)
	e.GET("/embed/:component", m.page)
	if cfg.Demo != nil {
		e.GET("/embed/demo", m.demoPage)
		e.POST("/embed/demo/token", m.demoToken)
	}
	api := e.Group("/embed/api", m.authenticate, m.rateLimit)
	api.GET("/session", m.session)
	api.GET("/conversations", m.listConversations)
	api.GET("/conversations/:id", m.getConversation)
	api.GET("/conversations/:id/items", m.listItems)
	api.POST("/conversations/:id/messages", m.reply)
	api.POST("/conversations/:id/read", m.markRead)
	api.GET("/unread", m.unread)
	api.GET("/stream", m.stream)
}

// endStreams ends the live streams open now: the server is shutting down, and their clients
// reconnect elsewhere. Streams opened later (the server may serve again) are not affected.
func (m *components) endStreams() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.ending)
	m.ending = make(chan struct{})
}

// streamsEnding is what endStreams closes, for a stream opening now.
func (m *components) streamsEnding() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ending
}

// componentCSP is the Content-Security-Policy of a component page, framed by the given origins
// (stored normalized; anything that is not a plain origin is left out rather than let into the
// header).
func componentCSP(origins []string) string {
	ancestors := "'self'"
	for _, o := range origins {
		if n, err := service.NormalizeOrigin(o); err == nil && n == o {
			ancestors += " " + o
		}
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https:; " +
		"media-src 'self' blob: https:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; " +
		"frame-ancestors " + ancestors
}

// page serves a component's page (all share embed.html, which reads the component from its path).
// The origins its project allows may frame it: the project of the account the loader names
// (?account=), or of the deprecated publishable token (?token=), which also earns a Deprecation
// header. The token never reaches a log: the access log records paths without query strings.
func (m *components) page(c echo.Context) error {
	if !embedComponents[c.Param("component")] {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	var origins []string
	var err error
	q := c.Request().URL.Query()
	h := c.Response().Header()
	switch {
	case q.Get("token") != "":
		h.Set("Deprecation", deprecationHeader)
		h.Set("Link", `</embed/docs#publishable-tokens>; rel="deprecation"`)
		origins, err = m.inbox.EmbedOriginsOfPublishableToken(ctx, q.Get("token"))
	case q.Get("account") != "":
		origins, err = m.inbox.EmbedOrigins(ctx, q.Get("account"))
	}
	if err != nil {
		return err
	}
	h.Set("Content-Security-Policy", componentCSP(origins))
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	return m.file(c, "embed.html")
}

// loader serves /embed/v1.js, which host pages load from another origin.
func (m *components) loader(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	return m.file(c, "loader/v1.js")
}

// asset serves a content-hashed file of the built front end; its name changes with its content.
func (m *components) asset(c echo.Context) error {
	name := path.Clean("ui/assets/" + c.Param("*"))
	if !strings.HasPrefix(name, "ui/assets/") {
		return echo.ErrNotFound
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return m.file(c, name)
}

// file writes one file of the built front end, typed by its extension; text compressed with gzip
// for clients that accept it (the embedded files never change, so each is compressed once).
func (m *components) file(c echo.Context, name string) error {
	b, err := fs.ReadFile(web.Dist, name)
	if errors.Is(err, fs.ErrNotExist) {
		return echo.ErrNotFound
	}
	if err != nil {
		return err
	}
	ext := path.Ext(name)
	ctype := mime.TypeByExtension(ext)
	if ctype == "" {
		ctype = echo.MIMEOctetStream
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if ext == ".js" || ext == ".css" || ext == ".html" || ext == ".svg" {
		h.Add("Vary", "Accept-Encoding")
		if strings.Contains(c.Request().Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			return c.Blob(http.StatusOK, ctype, m.gzipped(name, b))
		}
	}
	return c.Blob(http.StatusOK, ctype, b)
}

// gzipped returns the gzip of an embedded file, compressing it on first use.
func (m *components) gzipped(name string, b []byte) []byte {
	if z, ok := m.gz.Load(name); ok {
		return z.([]byte)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	m.gz.Store(name, buf.Bytes())
	return buf.Bytes()
}

// viewerOf returns the component API caller that authenticate found.
func viewerOf(c echo.Context) *store.Viewer {
	v, _ := c.Get("embed.viewer").(*store.Viewer)
	return v
}

// authenticate resolves the component API's caller: a user token (Authorization: Bearer <jwt>),
// or the deprecated publishable token (Authorization: Bearer atok_live_… with the user's id in
// Switchboard-User), whose answers carry a Deprecation header. Tokens travel only in headers:
// cross-site pages cannot send them, so the API needs no CSRF defence (it sets no cookie).
func (m *components) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		header := c.Request().Header.Get(echo.HeaderAuthorization)
		scheme, raw, _ := strings.Cut(header, " ")
		raw = strings.TrimSpace(raw)
		if header == "" {
			return &service.Error{Type: service.TypeMissingToken, Message: "No token provided. Send the user's token as 'Authorization: Bearer <token>'."}
		}
		if !strings.EqualFold(scheme, "Bearer") || raw == "" {
			return &service.Error{Type: service.TypeInvalidToken, Message: "The Authorization header must be 'Bearer <token>'."}
		}
		var v *store.Viewer
		var err error
		if strings.HasPrefix(raw, store.PublishableTokenPrefix) {
			c.Response().Header().Set("Deprecation", deprecationHeader)
			v, err = m.inbox.ViewerOfPublishableToken(ctx, raw, c.Request().Header.Get("Switchboard-User"))
		} else {
			v, err = m.inbox.ViewerOfToken(ctx, raw)
		}
		if err != nil {
			return err
		}
		if v.Locked {
			return &service.Error{Type: "platform_locked", Message: "This project is locked. Contact the operator of this installation."}
		}
		c.Set("embed.viewer", v)
		return next(c)
	}
}

// rateLimit holds each user to EmbedConfig.RateLimit requests per second.
func (m *components) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if m.rates.limit <= 0 {
			return next(c)
		}
		if !m.rates.limiter(viewerOf(c).UserID).Allow() {
			c.Response().Header().Set("Retry-After", "1")
			return &service.Error{Type: "rate_limited", Message: "Too many requests from this user's components; retry in a second."}
		}
		return next(c)
	}
}
