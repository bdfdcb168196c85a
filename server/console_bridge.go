package server

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/store"
)

// bridgeAny marks the console route that takes every method: the bridge.
const bridgeAny = "ANY"

// consoleCall marks a request the console bridge makes to a public operation on behalf of a
// signed-in user: the API authenticates it as the project (no API key, so no API log and no key
// rate limit), and notes the operation it reached. Only this process can put it in a request's
// context.
type consoleCall struct {
	projectID string
	operation string
}

type consoleCallKey struct{}

// consoleCallOf returns the console call a request is, or nil.
func consoleCallOf(ctx context.Context) *consoleCall {
	call, _ := ctx.Value(consoleCallKey{}).(*consoleCall)
	return call
}

// consoleBridge serves /console/api/projects/{project}/api/{path}: the public API's operation at
// /{path}, for the project, through the whole public stack (validation, handlers, error
// envelope), so the console shows accounts, numbers, campaigns, contacts, conversations,
// messages, blasts and usage exactly as the API does. consoleAuth has already required the role:
// viewer to read, developer to change. Each change that succeeds is audited as
// "api.<operationId>".
func (s *Server) consoleBridge(c echo.Context, cx *consoleCtx) error {
	r := c.Request()
	prefix := ConsoleAPIPath + "/projects/" + cx.projectID + "/api"
	rest := strings.TrimPrefix(r.URL.Path, prefix)
	if rest == r.URL.Path || !strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, ConsolePath) {
		return echo.ErrNotFound
	}
	call := &consoleCall{projectID: cx.projectID}
	req := r.Clone(context.WithValue(r.Context(), consoleCallKey{}, call))
	req.URL.Path, req.URL.RawPath = rest, strings.TrimPrefix(r.URL.RawPath, prefix)
	req.RequestURI = req.URL.RequestURI()
	for _, h := range []string{"Cookie", echo.HeaderAuthorization, CSRFHeader} {
		req.Header.Del(h)
	}
	out := &bufferedResponse{header: http.Header{}}
	s.console.bridge.ServeHTTP(out, req)
	for k, v := range out.header {
		if k != echo.HeaderContentLength {
			c.Response().Header()[k] = v
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && out.status < 400 && call.operation != "" {
		if err := s.console.core.Operator.Record(r.Context(), cx.actor, cx.projectID, "api."+call.operation, rest,
			map[string]any{"method": r.Method, "status": out.status}); err != nil {
			return err
		}
	}
	if out.body.Len() == 0 {
		return c.NoContent(out.status)
	}
	return c.Blob(out.status, out.header.Get(echo.HeaderContentType), out.body.Bytes())
}

// authenticateConsoleCall gives a console call its project's principal; it reports false for a
// request that is not one.
func (s *Server) authenticateConsoleCall(c echo.Context, rt routeKey) bool {
	call := consoleCallOf(c.Request().Context())
	if call == nil {
		return false
	}
	call.operation = s.routes[rt]
	c.SetRequest(c.Request().WithContext(withPrincipal(c.Request().Context(), &store.Principal{ProjectID: call.projectID})))
	return true
}

// bufferedResponse collects a response in memory.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}
