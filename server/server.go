package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// Config wires a Server to its dependencies.
type Config struct {
	// Core is the domain the API serves. Required.
	Core *service.Core
	// Logger receives access and error logs. Defaults to slog.Default().
	Logger *slog.Logger
	// RateLimit is the sustained requests per second allowed per API key. Defaults to 100;
	// negative disables rate limiting.
	RateLimit float64
	// RateBurst is the token bucket's size. Defaults to 200.
	RateBurst int
	// IdempotencyTTL is how long an Idempotency-Key's response is replayed. Defaults to 24 h.
	IdempotencyTTL time.Duration
	// IdempotencyLease is how long a request's claim on its Idempotency-Key lasts unless renewed:
	// the request renews it every third of it while it runs, and a retry waits at most this long
	// after the request's instance died (or its transaction was lost) before it runs afresh.
	// Defaults to 5 s.
	IdempotencyLease time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// CarrierRoutes are the carrier adapters' callback handlers by adapter name: the handler of
	// "twilio" serves every method under /carriers/twilio/, seeing the full request path. They
	// are public routes outside the contract; each handler authenticates its carrier itself.
	// Defaults to none.
	CarrierRoutes map[string]http.Handler
	// Middleware runs outermost, around every other middleware and handler, once the route is
	// found: it sees each response as the client gets it. The test suites validate every
	// response against openapi.yaml with it (server/contracttest). Defaults to none.
	Middleware []echo.MiddlewareFunc
	// Collectors are further metrics for the metrics listener (Metrics), such as the carrier
	// adapters'. Defaults to none.
	Collectors []prometheus.Collector
	// OperatorMetricsTTL is how long one read of the operator's figures from the database
	// (messages by status, queue and webhook backlogs) serves metrics scrapes. Defaults to 10 s;
	// negative reads them on every scrape.
	OperatorMetricsTTL time.Duration
	// Embed configures the embeddable components (see EmbedConfig); the zero value serves them
	// with its defaults.
	Embed EmbedConfig
	// AuthCacheTTL is how long the answer for an API key is served from memory instead of the
	// database (see store.AuthCache): revocations and locks, announced by the instance that makes
	// them, reach it at once; the TTL bounds how stale it can be when an announcement is lost.
	// Defaults to store.DefaultCacheTTL (500 ms); negative asks the database on every request.
	AuthCacheTTL time.Duration
	// AccountCacheTTL is how long an account read by GET /accounts/{id} is served from memory
	// instead of the database (see store.AccountCache): changes, announced by the instance that
	// makes them, reach it at once; the TTL bounds how stale it can be when an announcement is
	// lost. Defaults to store.DefaultCacheTTL (500 ms); negative asks the database on every
	// request.
	AccountCacheTTL time.Duration
}

// Server is the HTTP API: an Echo instance with Switchboard's middleware and handlers.
type Server struct {
	echo           *echo.Echo
	store          *store.Store
	tokens         *service.Tokens
	numbers        *service.Numbers
	messages       *service.Messages
	blasts         *service.Blasts
	audiences      *service.Audiences
	verifications  *service.Verifications
	voice          *service.Voice
	carriers       *service.Carriers
	usage          *service.Usage
	log            *slog.Logger
	now            func() time.Time
	metrics        *metrics
	apiLogs        *apiLogWriter
	rates          *rateLimiter
	idempotencyTTL time.Duration
	// console is the operator console's API (see console.go).
	console *consoleAPI
	// idempotencyLease is Config.IdempotencyLease.
	idempotencyLease time.Duration
	// components serves the embeddable components (embed.go).
	components *components
	// keys answers which project an API key belongs to, mostly from memory.
	keys *store.AuthCache
	// accounts answers GET /accounts/{id}, mostly from memory.
	accounts *store.AccountCache

	// routes maps each route (a method and an Echo path, "/accounts/:account_id") to its
	// OpenAPI operationId; public marks the routes that need no API key (security: [] in the
	// spec); operations holds each one's operation as kin-openapi describes it, for
	// validateRequest.
	routes     map[routeKey]string
	public     map[routeKey]bool
	operations map[routeKey]*operation
}

// New builds the API server.
func New(cfg Config) (*Server, error) {
	if cfg.Core == nil {
		return nil, errors.New("server: Config needs Core")
	}
	core := cfg.Core
	s := &Server{
		store: core.Store, tokens: core.Tokens, numbers: core.Numbers, messages: core.Messages, voice: core.Voice,
		blasts: core.Blasts, audiences: core.Audiences, carriers: core.Carriers, usage: core.Usage, verifications: core.Verifications,
		log: cfg.Logger, now: cfg.Now,
		metrics: newMetrics(), idempotencyTTL: cfg.IdempotencyTTL, idempotencyLease: cfg.IdempotencyLease,
		routes: map[routeKey]string{}, public: map[routeKey]bool{}, operations: map[routeKey]*operation{},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.idempotencyTTL == 0 {
		s.idempotencyTTL = service.IdempotencyTTL
	}
	if s.idempotencyLease == 0 {
		s.idempotencyLease = DefaultIdempotencyLease
	}
	limit, burst := cfg.RateLimit, cfg.RateBurst
	if limit == 0 {
		limit = 100
	}
	if burst == 0 {
		burst = 200
	}
	s.rates = &rateLimiter{limit: rate.Limit(limit), burst: burst, keys: map[string]*rate.Limiter{}}

	registerFormats()
	spec, err := gen.GetSwagger()
	if err != nil {
		return nil, fmt.Errorf("server: load embedded spec: %w", err)
	}
	s.indexRoutes(spec)
	s.metrics.registry.MustRegister(core.Webhooks.Collectors()...)
	s.metrics.registry.MustRegister(core.Messages.Collectors()...)
	s.metrics.registry.MustRegister(newOperatorCollector(core.Store, s.log, cfg.OperatorMetricsTTL))
	s.metrics.registry.MustRegister(cfg.Collectors...)
	s.apiLogs = newAPILogWriter(core.Store, s.log, s.metrics.apiLogsDropped)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	chain := append(append([]echo.MiddlewareFunc(nil), cfg.Middleware...),
		middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: func() string { return store.NewID("req") }}),
		s.observe,
		middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("panic", "request_id", requestID(c), "err", err, "stack", string(stack))
			return err
		}}),
		bodyLimits(),
		s.authenticate,
		s.rateLimit,
		refuseUnstorableParams,
		s.validateRequest,
		s.idempotency,
	)
	e.Use(composed(chain))
	gen.RegisterHandlers(e, gen.NewStrictHandler(s, []gen.StrictMiddlewareFunc{announceDeprecation}))
	s.mountConsole(e, core)
	// Signed file URLs: public, outside the contract (see serveFile).
	e.GET("/files/:token", s.serveFile)
	e.GET(strings.TrimSuffix(service.RecordingFilePath, "/")+"/:token", s.serveRecording)
	if err := s.mountDocs(e); err != nil {
		return nil, fmt.Errorf("server: API reference: %w", err)
	}
	s.registerEmbed(e, cfg.Embed, core.Inbox)
	for name, h := range cfg.CarrierRoutes {
		e.Any("/carriers/"+name+"/*", carrierRoute(name, h))
	}
	s.echo = e
	s.keys = store.NewAuthCache(core.Store, store.CacheConfig{TTL: cfg.AuthCacheTTL})
	s.accounts = store.NewAccountCache(core.Store, store.CacheConfig{TTL: cfg.AccountCacheTTL})
	return s, nil
}

// carrierRoute serves a carrier's callback handler. Its refusals (net/http's plain text: a wrong
// method, a bad signature, "try again") leave in the error envelope with their status, as every
// other answer does; a 5xx stays a 5xx, so that the carrier retries.
func carrierRoute(name string, h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := &refusalCatcher{ResponseWriter: c.Response()}
		h.ServeHTTP(w, c.Request())
		if w.refused == 0 {
			return nil
		}
		text := strings.TrimSpace(strings.ToValidUTF8(string(w.text), ""))
		typ, ok := carrierRefusals[w.refused]
		if !ok || w.refused >= http.StatusInternalServerError {
			return fmt.Errorf("server: carrier %s answered %d: %s", name, w.refused, text)
		}
		return &service.Error{Type: typ, Message: "The " + name + " callback refused the request: " + text + "."}
	}
}

// carrierRefusals are the error types of a carrier handler's 4xx answers; any other is a 500.
var carrierRefusals = map[int]string{
	http.StatusBadRequest:            "invalid_request",
	http.StatusUnauthorized:          "forbidden",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              service.TypeNotFound,
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusUnprocessableEntity:   service.TypeValidation,
}

// dropUnusableRequestID discards a client's X-Request-Id that is too long or not plain visible
// ASCII, so a fresh one is minted: request ids end up in logs and the API log table. ServeHTTP
// calls it before Echo sees the request: as an Echo Pre middleware it made Echo wrap its routing
// in two new functions for every request.
func dropUnusableRequestID(h http.Header) {
	if id := h.Get(echo.HeaderXRequestID); id != "" {
		ok := len(id) <= 128
		for i := 0; ok && i < len(id); i++ {
			ok = id[i] > ' ' && id[i] < 0x7f
		}
		if !ok {
			h.Del(echo.HeaderXRequestID)
		}
	}
}

// defineFormats registers, once per process (kin-openapi keeps them globally), the validators
// of the string formats the contract uses and the JSON body decoder.
var defineFormats sync.Once

// registerFormats registers them (defineFormats).
func registerFormats() {
	defineFormats.Do(func() {
		openapi3.DefineStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail))
		openapi3.DefineStringFormatCallback("uri", func(v string) error {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return errors.New("is not an absolute http(s) URL")
			}
			return nil
		})
		openapi3filter.RegisterBodyDecoder("application/json", strictJSONBody)
	})
}

// strictJSONBody decodes a JSON request body as kin-openapi's own decoder does, but refuses what
// encoding/json would let through:
//   - anything after the first value: `{"a":1}{"a":2}` is not JSON (400 invalid_json);
//   - bytes that are not UTF-8, and \u escapes of lone UTF-16 surrogates ("\ud800"), which
//     encoding/json silently turns into U+FFFD, so that the client's text would be stored altered.
//     JSON text is UTF-8 (RFC 8259 §8.1) and I-JSON (RFC 7493 §2.1), which the API's bodies are,
//     allows no lone surrogate: 400 invalid_json, like any body that is not JSON;
//   - NUL characters (\u0000) in any string or object key: PostgreSQL cannot store them in text
//     and no field has a use for one. That is a 422 validation_error naming each field (a
//     *nulError, which validationError reads), before anything reaches a handler or the store.
//
// Most bodies are read by decodeJSONValue, which takes anything in doubt the slow way below.
func strictJSONBody(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	var data []byte
	if br, ok := body.(*bytes.Reader); ok {
		// kin-openapi hands the body it read: one copy of its size, not io.ReadAll's doublings.
		data = make([]byte, br.Len())
		_, _ = br.Read(data)
	} else {
		var err error
		if data, err = io.ReadAll(body); err != nil {
			return nil, err
		}
	}
	return decodeJSONBody(data)
}

// decodeJSONBody is strictJSONBody's decoding of the body's bytes.
func decodeJSONBody(data []byte) (any, error) {
	if v, ok := decodeJSONValue(data); ok {
		if err := refuseNUL(v, data); err != nil {
			return nil, err
		}
		return v, nil
	}
	return slowJSONBody(data)
}

// slowJSONBody is decodeJSONBody by encoding/json, with the checks that decodeJSONValue makes as
// it reads.
func slowJSONBody(data []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: errors.New("unexpected data after the JSON value")}
	}
	if !utf8.Valid(data) {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: errors.New("the body is not UTF-8")}
	}
	if err := loneSurrogate(data); err != nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
	}
	if err := refuseNUL(v, data); err != nil {
		return nil, err
	}
	return v, nil
}

// refuseNUL returns a *nulError naming the strings and keys of v, decoded from data, that hold a
// NUL character. One comes from a \u0000 escape (JSON refuses raw control characters in strings):
// bodies without one are not walked.
func refuseNUL(v any, data []byte) error {
	if bytes.Contains(data, []byte(`\u0000`)) {
		nul := &nulError{fields: map[string]string{}}
		nul.find(v, "")
		if len(nul.fields) > 0 {
			return nul
		}
	}
	return nil
}

// loneSurrogate finds a \u escape of a UTF-16 surrogate that is not half of a pair in a JSON
// text that decoded: in one, a backslash appears only in strings, always starting an escape.
func loneSurrogate(data []byte) error {
	hex4 := func(i int) rune {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return -1
		}
		n, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		if err != nil {
			return -1
		}
		return rune(n)
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		r := hex4(i)
		switch {
		case r < 0:
			i++ // a two-character escape such as \\ or \"
		case r >= 0xd800 && r <= 0xdbff:
			if low := hex4(i + 6); low < 0xdc00 || low > 0xdfff {
				return fmt.Errorf("a \\u escape of a lone UTF-16 surrogate (%U)", r)
			}
			i += 11
		case r >= 0xdc00 && r <= 0xdfff:
			return fmt.Errorf("a \\u escape of a lone UTF-16 surrogate (%U)", r)
		default:
			i += 5
		}
	}
	return nil
}

// nulError is a JSON body whose strings or keys hold NUL characters: each field path (as
// validation_error names fields: "metadata.note", "attachments.0.url") with its message.
type nulError struct{ fields map[string]string }

func (e *nulError) Error() string {
	return "NUL characters in " + strings.Join(slices.Sorted(maps.Keys(e.fields)), ", ")
}

// find records the fields of v, found at path, that hold a NUL character.
func (e *nulError) find(v any, path string) {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			e.fields[orBody(path)] = "must not contain NUL characters"
		}
	case map[string]any:
		for k, inner := range v {
			if strings.IndexByte(k, 0) >= 0 {
				// The key itself is not repeated in the answer: it is the offending text.
				e.fields[orBody(path)] = "must not contain NUL characters in its keys"
				continue
			}
			e.find(inner, joinField(path, k))
		}
	case []any:
		for i, inner := range v {
			e.find(inner, joinField(path, strconv.Itoa(i)))
		}
	}
}

// refuseUnstorableParams refuses, with 422 validation_error naming each, path and query
// parameters and an Idempotency-Key header that hold a NUL character or are not UTF-8: such text
// cannot be stored or looked up in PostgreSQL, and no parameter has a use for it.
func refuseUnstorableParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var detail map[string]any
		check := func(field, v string) {
			var msg string
			switch {
			case strings.IndexByte(v, 0) >= 0:
				msg = "must not contain NUL characters"
			case !utf8.ValidString(v):
				msg = "must be UTF-8"
			default:
				return
			}
			if detail == nil {
				detail = map[string]any{}
			}
			detail[field] = []string{msg}
		}
		values := c.ParamValues()
		for i, name := range c.ParamNames() {
			if i >= len(values) {
				break
			}
			v := values[i]
			if c.Request().URL.RawPath != "" {
				// Echo routed on the escaped path (see echo.GetPath): its parameters are escaped,
				// and the handler's binding unescapes them.
				if unescaped, err := url.PathUnescape(v); err == nil {
					v = unescaped
				}
			}
			check(name, v)
		}
		if c.Request().URL.RawQuery != "" {
			for name, vs := range c.QueryParams() {
				for _, v := range vs {
					check(name, v)
				}
			}
		}
		check("Idempotency-Key", c.Request().Header.Get("Idempotency-Key"))
		if len(detail) > 0 {
			for field := range detail {
				if strings.IndexByte(field, 0) >= 0 || !utf8.ValidString(field) {
					// A parameter's name is echoed only when it is itself printable.
					delete(detail, field)
					detail["query"] = []string{"has a parameter name that is not storable text"}
				}
			}
			return &service.Error{Type: service.TypeValidation, Message: "The request is invalid; see detail for each field.", Detail: detail}
		}
		return next(c)
	}
}

// indexRoutes records each operation's Echo route, operationId and whether it is public.
func (s *Server) indexRoutes(spec *openapi3.T) {
	for path, item := range spec.Paths.Map() {
		echoPath := path
		for strings.Contains(echoPath, "{") {
			i, j := strings.Index(echoPath, "{"), strings.Index(echoPath, "}")
			echoPath = echoPath[:i] + ":" + echoPath[i+1:j] + echoPath[j+1:]
		}
		for method, op := range item.Operations() {
			key := routeKey{method, echoPath}
			// The embedded spec carries oapi-codegen's Go names (ListAccounts); the contract's
			// operationIds are lowerCamelCase (listAccounts), and metrics use the contract's.
			id := op.OperationID
			if id != "" {
				id = strings.ToLower(id[:1]) + id[1:]
			}
			s.routes[key] = id
			s.operations[key] = &operation{route: operationRoute(spec, path, item, method, op), options: operationOptions(item, op)}
			if op.Security != nil && len(*op.Security) == 0 {
				s.public[key] = true
			}
		}
	}
}

// routeKey is one of the API's routes: a method and Echo's path (c.Path()), such as
// {"POST", "/accounts/:account_id/messages"}. As a map key it costs a request no concatenation.
type routeKey struct{ method, path string }

// routeOf is c's route.
func routeOf(c echo.Context) routeKey { return routeKey{c.Request().Method, c.Path()} }

// operationOf names a request's operation for metrics: its operationId, or "unknown".
func (s *Server) operationOf(c echo.Context) string {
	if op, ok := s.routes[routeOf(c)]; ok {
		return op
	}
	return "unknown"
}

// ServeHTTP makes the Server an http.Handler. HEAD is served wherever GET is (RFC 9110 §9.3.2):
// the request goes through the stack as its GET (routing, authentication, validation, handler)
// and the answer keeps the GET's status and headers, Content-Length included, without the body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dropUnusableRequestID(r.Header)
	if r.Method != http.MethodHead {
		s.echo.ServeHTTP(w, r)
		return
	}
	get := r.WithContext(context.WithValue(r.Context(), headKey{}, true))
	get.Method = http.MethodGet
	hw := &headWriter{ResponseWriter: w}
	s.echo.ServeHTTP(hw, get)
	hw.finish()
}

// headKey marks the context of a HEAD request served as its GET.
type headKey struct{}

// methodOf is a request's method as the client sent it: HEAD for a HEAD served as its GET.
func methodOf(r *http.Request) string {
	if head, _ := r.Context().Value(headKey{}).(bool); head {
		return http.MethodHead
	}
	return r.Method
}

// headWriter answers a HEAD request from what its GET writes: it holds the status back, counts
// the body instead of sending it, and sends the status with the body's Content-Length at the end.
type headWriter struct {
	http.ResponseWriter
	status int
	size   int
}

func (h *headWriter) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *headWriter) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	h.size += len(b)
	return len(b), nil
}

// Flush does nothing: the status and headers leave once the whole body is counted.
func (h *headWriter) Flush() {}

func (h *headWriter) finish() {
	if h.status == 0 {
		return
	}
	if hdr := h.Header(); hdr.Get("Content-Length") == "" && h.size > 0 && hdr.Get("Transfer-Encoding") == "" {
		hdr.Set("Content-Length", strconv.Itoa(h.size))
	}
	h.ResponseWriter.WriteHeader(h.status)
}

// FlushLogs writes every API log recorded so far; tests and `switchboard logs` rely on it.
func (s *Server) FlushLogs() { s.apiLogs.flush() }

// Close stops the background writers after writing what they hold.
func (s *Server) Close(context.Context) error {
	s.components.endStreams()
	s.apiLogs.close()
	s.keys.Close()
	s.accounts.Close()
	return nil
}
