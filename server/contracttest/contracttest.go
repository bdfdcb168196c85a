// Package contracttest checks the API's responses against their descriptions, for the test
// suites: an Echo middleware that validates every response a server under test writes, and Check
// for a response read on the client side. New checks the public API against openapi.yaml;
// NewConsole checks the console's API against web/console-api.yaml. A handler that answers
// something its description does not describe (an undeclared status, a field of the wrong type, a
// missing required field or header, a body that is not the error envelope) fails the spec that
// made the request.
//
// It is test code that lives outside _test files only so that several suites can share it; the
// server never uses it.
package contracttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
	"github.com/onsi/ginkgo/v2"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/web"
)

// outside are the path prefixes the server serves outside the public contract: signed file URLs,
// carrier callbacks, the API reference, the operator console and the embedded components (each
// with its own API, documented apart: the console's, web/console-api.yaml, is checked by
// NewConsole, and its calls of public operations are requests of their own, checked like any
// other; the components' API is web/embed-api.yaml) and their assets. New does not check them.
var outside = []string{"/files/", "/carriers/", "/docs", "/console", "/embed/", "/ui/"}

// Checker validates responses against one API description.
type Checker struct {
	name   string
	spec   *openapi3.T
	paths  []specPath
	errors *openapi3.Schema
	// scope returns the path of a request within the description, or false for a request the
	// description does not cover.
	scope func(urlPath string) (string, bool)
}

// specPath is one path of the contract, split into segments; a segment in braces is a parameter.
type specPath struct {
	path     string
	segments []string
	item     *openapi3.PathItem
}

func newChecker(name string, spec *openapi3.T, errors *openapi3.Schema, scope func(string) (string, bool)) *Checker {
	c := &Checker{name: name, spec: spec, errors: errors, scope: scope}
	for path, item := range spec.Paths.Map() {
		c.paths = append(c.paths, specPath{path: path, segments: strings.Split(strings.Trim(path, "/"), "/"), item: item})
	}
	return c
}

// New loads the public contract embedded in gen. Its checker passes the responses of the routes
// outside it (see outside).
func New() (*Checker, error) {
	spec, err := gen.GetSwagger()
	if err != nil {
		return nil, fmt.Errorf("contracttest: load the contract: %w", err)
	}
	ref := spec.Components.Schemas["ErrorResponse"]
	if ref == nil || ref.Value == nil {
		return nil, errors.New("contracttest: the contract has no ErrorResponse schema")
	}
	return newChecker("openapi.yaml", spec, ref.Value, func(p string) (string, bool) {
		for _, prefix := range outside {
			if strings.HasPrefix(p, prefix) {
				return "", false
			}
		}
		return p, true
	}), nil
}

// ConsoleBase is where the console API's paths are served (its description's server URL).
const ConsoleBase = "/console/api"

// NewConsole loads the console API's description, web/console-api.yaml (its references to the
// components' description, web/embed-api.yaml, resolved). Its checker covers the requests under
// ConsoleBase but those of the bridge to the public API (/projects/{id}/api/…): their answers
// are the public operations', which New's checker validates as the bridge makes them.
func NewConsole() (*Checker, error) {
	loader := openapi3.NewLoader()
	files := map[string][]byte{"console-api.yaml": web.ConsoleAPI, "embed-api.yaml": web.EmbedAPI}
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if b, ok := files[path.Base(u.Path)]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("contracttest: %s is not a description this package knows", u)
	}
	spec, err := loader.LoadFromDataWithPath(web.ConsoleAPI, &url.URL{Path: "console-api.yaml"})
	if err != nil {
		return nil, fmt.Errorf("contracttest: load web/console-api.yaml: %w", err)
	}
	if err := spec.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("contracttest: web/console-api.yaml is not valid: %w", err)
	}
	ref := spec.Components.Responses["Error"]
	if ref == nil || ref.Value == nil || ref.Value.Content.Get(echo.MIMEApplicationJSON) == nil {
		return nil, errors.New("contracttest: web/console-api.yaml has no Error response")
	}
	envelope := ref.Value.Content.Get(echo.MIMEApplicationJSON).Schema.Value
	return newChecker("web/console-api.yaml", spec, envelope, func(p string) (string, bool) {
		rest, ok := strings.CutPrefix(p, ConsoleBase)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			return "", false
		}
		if segs := strings.Split(strings.Trim(rest, "/"), "/"); len(segs) >= 3 && segs[0] == "projects" && segs[2] == "api" {
			return "", false // the bridge
		}
		return rest, true
	}), nil
}

// MustNew is New for suites: it panics when the contract does not load.
func MustNew() *Checker {
	c, err := New()
	if err != nil {
		panic(err)
	}
	return c
}

// MustNewConsole is NewConsole for suites: it panics when the description does not load.
func MustNewConsole() *Checker {
	c, err := NewConsole()
	if err != nil {
		panic(err)
	}
	return c
}

// match finds the contract path of a request path. A literal segment beats a parameter, so
// /accounts/{account_id}/status is not taken for a parameter.
func (c *Checker) match(urlPath string) *specPath {
	segs := strings.Split(strings.Trim(urlPath, "/"), "/")
	var best *specPath
	bestLiterals := -1
	for i := range c.paths {
		p := &c.paths[i]
		if len(p.segments) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for j, s := range p.segments {
			if strings.HasPrefix(s, "{") {
				if segs[j] == "" {
					ok = false
					break
				}
				continue
			}
			if s != segs[j] {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = p, literals
		}
	}
	return best
}

// Check validates one response to req against the description. Responses of routes outside it
// (see New and NewConsole) pass; responses of routes and methods it does not have must be an
// error envelope.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	path, ok := c.scope(req.URL.Path)
	if !ok {
		return nil
	}
	describe := func(err error) error {
		b := body
		if len(b) > 2000 {
			b = append(b[:2000:2000], "…"...)
		}
		return fmt.Errorf("the response to %s %s breaks %s: %d %s\n%w", req.Method, req.URL.RequestURI(), c.name, status, b, err)
	}
	p := c.match(path)
	var op *openapi3.Operation
	if p != nil {
		op = p.item.GetOperation(req.Method)
		if op == nil && req.Method == http.MethodHead {
			op = p.item.Get
		}
	}
	if op == nil {
		// An unknown route or method: 404/405 (or an earlier refusal) in the envelope.
		if status < 400 {
			return describe(fmt.Errorf("status %d for a route or method that the contract does not have", status))
		}
		if req.Method == http.MethodHead {
			return nil
		}
		if err := c.checkEnvelope(header, body); err != nil {
			return describe(err)
		}
		return nil
	}
	if req.Method == http.MethodHead {
		// kin-openapi does not validate HEAD: its status must be one GET declares.
		if op.Responses.Status(status) == nil && op.Responses.Default() == nil {
			return describe(errors.New("status is not declared for GET"))
		}
		return nil
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req,
			Route:   &routers.Route{Spec: c.spec, Path: p.path, PathItem: p.item, Method: req.Method, Operation: op},
		},
		Status: status,
		Header: header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return describe(err)
	}
	if status >= 400 {
		// Every non-2xx answer is the envelope, whatever an operation declares.
		if err := c.checkEnvelope(header, body); err != nil {
			return describe(err)
		}
	}
	return nil
}

// checkEnvelope checks that a response is JSON in the error envelope.
func (c *Checker) checkEnvelope(header http.Header, body []byte) error {
	if ct := header.Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return fmt.Errorf("an error response of Content-Type %q, not the JSON envelope", ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("an error response that is not JSON: %w", err)
	}
	if err := c.errors.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("an error response outside the envelope: %w", err)
	}
	return nil
}

// Middleware returns an Echo middleware that checks every response the server writes and hands
// each failure to report. Put it outermost (server.Config.Middleware), where the response is
// final: errors rendered, headers set.
func (c *Checker) Middleware(report func(error)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(ec echo.Context) error {
			res := ec.Response()
			capture := &capture{ResponseWriter: res.Writer}
			res.Writer = capture
			err := next(ec)
			if err != nil {
				ec.Error(err)
			}
			res.Writer = capture.ResponseWriter
			if res.Committed {
				if verr := c.Check(ec.Request(), res.Status, res.Header(), capture.body.Bytes()); verr != nil {
					report(verr)
				}
			}
			return nil
		}
	}
}

// FailSpecs is the middleware for Ginkgo suites: a response that breaks the contract fails the
// running spec.
func (c *Checker) FailSpecs() echo.MiddlewareFunc {
	return c.Middleware(func(err error) { ginkgo.Fail(err.Error()) })
}

// capture copies a response body while writing it through.
type capture struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *capture) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on, as Echo's Response expects of its writer.
func (w *capture) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *capture) Unwrap() http.ResponseWriter { return w.ResponseWriter }
