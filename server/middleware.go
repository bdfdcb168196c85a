package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// tracer makes the requests' spans; it is the process's current one (a no-op unless tracing is on), looked up at each use.
func tracer() trace.Tracer { return otel.Tracer("github.com/switchboard/switchboard/server") }

// composed is the middleware chain mws (the first outermost) built once, around the handler that
// Echo's router found for the request (c.Handler()). Echo applies its middleware to the route's
// handler anew for each request, a closure per middleware; as one middleware, the built chain
// costs it none.
func composed(mws []echo.MiddlewareFunc) echo.MiddlewareFunc {
	h := func(c echo.Context) error { return c.Handler()(c) }
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return func(echo.HandlerFunc) echo.HandlerFunc { return h }
}

// serverSpan is the option of every request's span (made once: an option is an allocation).
var serverSpan = trace.WithSpanKind(trace.SpanKindServer)

// observe is the outermost middleware: it renders any error so the final status is known, then
// records metrics, the access log and, for authenticated requests, the API log.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		// A span per request, continuing the caller's trace (traceparent) when it sends one; none
		// while tracing is off (kit.Traced), which also spares the request's copy.
		var span trace.Span = noop.Span{}
		if kit.Traced() {
			req := c.Request()
			ctx := otel.GetTextMapPropagator().Extract(req.Context(), propagation.HeaderCarrier(req.Header))
			ctx, span = tracer().Start(ctx, req.Method, serverSpan)
			c.SetRequest(req.WithContext(ctx))
		}
		defer span.End()
		if err := next(c); err != nil {
			c.Error(err)
		}
		elapsed := time.Since(start)
		status := c.Response().Status
		op := s.operationOf(c)
		method := methodOf(c.Request())
		if span.IsRecording() {
			span.SetName(method + " " + c.Path())
			span.SetAttributes(attribute.String("http.request.method", method), attribute.String("http.route", c.Path()),
				attribute.Int("http.response.status_code", status), attribute.String("switchboard.operation", op),
				attribute.String("switchboard.request_id", requestID(c)))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		}
		s.metrics.observeRequest(op, method, status, elapsed)
		p := principal(c.Request().Context())
		if p.KeyID != "" {
			s.apiLogs.record(store.APILog{
				ProjectID: p.ProjectID, KeyID: p.KeyID, RequestID: requestID(c),
				Method: method, Path: c.Request().URL.Path, Status: status,
				DurationMicros: elapsed.Microseconds(), CreatedAt: start.UTC(),
				Query: service.CleanText(c.Request().URL.RawQuery, 1024), IP: clientIP(c.Request()),
				UserAgent: service.CleanText(c.Request().UserAgent(), 512), ErrorType: errorTypeOf(c),
			})
		}
		// The route, never the path: a path may carry a signed file token.
		route := "unknown"
		if op != "unknown" || strings.HasPrefix(c.Path(), "/files/") || strings.HasPrefix(c.Path(), "/carriers/") ||
			strings.HasPrefix(c.Path(), "/docs") {
			route = c.Path()
		}
		// Probes come every few seconds from each load balancer: they are logged at debug.
		level := slog.LevelInfo
		if op == "getHealth" || op == "getReadiness" {
			level = slog.LevelDebug
		}
		s.log.LogAttrs(c.Request().Context(), level, "request", slog.String("method", method),
			slog.String("route", route), slog.Int("status", status),
			slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000), slog.String("request_id", requestID(c)),
			slog.String("key_id", p.KeyID))
		return nil
	}
}

// authenticate resolves the bearer API key of every non-public route to a principal, and refuses
// missing, unknown, revoked, locked and (outside sends) demo keys. Unknown routes pass through so
// that they answer 404/405.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rt := routeOf(c)
		if _, known := s.routes[rt]; !known || s.public[rt] {
			return next(c)
		}
		if s.authenticateConsoleCall(c, rt) {
			return next(c)
		}
		header := c.Request().Header.Get(echo.HeaderAuthorization)
		if header == "" {
			return &service.Error{Type: "missing_api_key", Message: "No API key provided. Send it as 'Authorization: Bearer <API_KEY>'."}
		}
		scheme, secret, _ := strings.Cut(header, " ")
		secret = strings.TrimSpace(secret)
		if !strings.EqualFold(scheme, "Bearer") || secret == "" {
			return &service.Error{Type: "invalid_api_key", Message: "The Authorization header must be 'Bearer <API_KEY>'."}
		}
		if !strings.HasPrefix(secret, "sk_live_") && !strings.HasPrefix(secret, "sk_demo_") {
			return &service.Error{Type: "invalid_api_key", Message: "Invalid API key."}
		}
		p, err := s.keys.Authenticate(c.Request().Context(), secret)
		if errors.Is(err, store.ErrNotFound) {
			return &service.Error{Type: "invalid_api_key", Message: "Invalid API key."}
		}
		if err != nil {
			return err
		}
		if p.Locked {
			return &service.Error{Type: "platform_locked", Message: "This project is locked. Contact the operator of this installation."}
		}
		if p.Demo && !demoRoutes[rt] {
			return &service.Error{Type: "demo_api_key", Message: "Demo API keys can only send messages through the demo number; use a live key."}
		}
		c.SetRequest(c.Request().WithContext(withPrincipal(c.Request().Context(), p)))
		return next(c)
	}
}

// demoRoutes are the only operations a demo key may call.
var demoRoutes = map[routeKey]bool{{http.MethodPost, "/accounts/:account_id/messages"}: true}

// rateLimiter is a token bucket per API key. Limits are per instance.
type rateLimiter struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	keys  map[string]*rate.Limiter
}

func (r *rateLimiter) limiter(key string) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.keys[key]
	if l == nil {
		l = rate.NewLimiter(r.limit, r.burst)
		r.keys[key] = l
	}
	return l
}

func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := principal(c.Request().Context())
		if p.KeyID == "" || s.rates.limit <= 0 {
			return next(c)
		}
		l := s.rates.limiter(p.KeyID)
		now := s.now()
		h := c.Response().Header()
		// The contract's RateLimit-Limit is the bucket size, so RateLimit-Remaining never exceeds it.
		h.Set("RateLimit-Limit", strconv.Itoa(s.rates.burst))
		if !l.AllowN(now, 1) {
			wait := time.Duration(float64(time.Second) / float64(s.rates.limit))
			if r := l.ReserveN(now, 1); r.OK() {
				wait = r.DelayFrom(now)
				r.CancelAt(now)
			}
			secs := strconv.Itoa(int(math.Ceil(wait.Seconds())))
			h.Set("Retry-After", secs)
			h.Set("RateLimit-Remaining", "0")
			h.Set("RateLimit-Reset", secs)
			return &service.Error{Type: "rate_limited", Message: "Too many requests for this API key; retry after the Retry-After header's seconds."}
		}
		h.Set("RateLimit-Remaining", strconv.Itoa(int(l.TokensAt(now))))
		return next(c)
	}
}

// idempotency replays the first response to a POST that repeats an Idempotency-Key with the same
// body, and refuses a reuse with another body or while the first is still in flight. The request
// runs holding a claim on the key (see store.ClaimIdempotencyKey), which the store operation that
// creates its resource records it with; the response is recorded once written.
func (s *Server) idempotency(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key := c.Request().Header.Get("Idempotency-Key")
		p := principal(c.Request().Context())
		if c.Request().Method != http.MethodPost || key == "" || p.ProjectID == "" {
			return next(c)
		}
		if len(key) > 255 {
			return service.Invalid("Idempotency-Key", "must be at most 255 characters")
		}
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return fmt.Errorf("read body: %w", err)
		}
		rest := io.NopCloser(bytes.NewReader(body))
		if v, ok := c.Request().Body.(validated); ok {
			// The value validateRequest kept stays for the handler to bind (see operationOptions).
			rest = keptBody{ReadCloser: rest, value: v.ValidatedValue()}
		}
		c.Request().Body = rest
		sum := sha256.Sum256(append([]byte(c.Request().Method+" "+c.Request().URL.Path+"\n"), body...))
		hash := hex.EncodeToString(sum[:])
		ctx := c.Request().Context()
		claim, prior, err := s.store.ClaimIdempotencyKey(ctx, p.ProjectID, key, hash, s.now(), s.idempotencyTTL, s.idempotencyLease)
		if err != nil {
			return err
		}
		if prior != nil {
			return s.replay(c, prior, hash)
		}
		stopRenewing := s.holdClaim(ctx, claim)
		defer stopRenewing() // a panic, too, ends the renewals; the claim then lapses
		c.SetRequest(c.Request().WithContext(store.WithIdempotencyClaim(ctx, claim)))
		rec := &recorder{ResponseWriter: c.Response().Writer}
		c.Response().Writer = rec
		if err := next(c); err != nil {
			c.Error(err)
		}
		stopRenewing()
		// The response is written: a failure to record it is logged, not returned. The client has
		// its answer; a retry shows the resource the request created, or runs afresh once the
		// claim's lease is over.
		ctx = context.WithoutCancel(ctx)
		status := c.Response().Status
		// Neither a server error nor a client that went away (499) is an answer to replay.
		if status >= 500 || status == statusClientClosed {
			err = s.store.ReleaseIdempotencyKey(ctx, claim)
		} else {
			err = s.store.CompleteIdempotencyKey(ctx, claim, status, c.Response().Header().Get(echo.HeaderContentType), rec.body.Bytes())
		}
		if err != nil {
			s.log.Error("record idempotent response", "request_id", requestID(c), "err", err)
		}
		return nil
	}
}

// validated is a request body that carries the value validateRequest decoded and validated
// (kin-openapi's KeepValidatedValue), which the generated handlers bind.
type validated interface{ ValidatedValue() any }

// keptBody is a request body read again that still carries its validated value.
type keptBody struct {
	io.ReadCloser
	value any
}

// ValidatedValue returns the value validateRequest validated.
func (b keptBody) ValidatedValue() any { return b.value }

// recorder keeps a copy of a response body while writing it through.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
