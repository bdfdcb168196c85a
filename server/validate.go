package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// validationOptions are kin-openapi's options for every request: every failure at once, and no
// authentication (authenticate has done it).
var validationOptions = &openapi3filter.Options{
	MultiError:         true,
	AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
}

// validateRequest checks each request of a contract's operation against openapi.yaml (parameters
// and body) before its handler runs, answering 422 validation_error (or the field's own error
// type) through validationError. Echo has already matched the route: its operation comes from
// s.operations, built once from the spec, so kin-openapi never matches the path again. Unknown
// routes and methods go on to Echo's router, which answers 404, or 405 with the Allow header
// that RFC 9110 requires.
func (s *Server) validateRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		route := s.operations[req.Method+" "+c.Path()]
		if route == nil {
			return next(c)
		}
		names, values := c.ParamNames(), c.ParamValues()
		params := make(map[string]string, len(names))
		for i, name := range names {
			if i >= len(values) {
				break
			}
			v := values[i]
			if req.URL.RawPath != "" {
				// Echo routed on the escaped path (see echo.GetPath): its parameters are escaped.
				if unescaped, err := url.PathUnescape(v); err == nil {
					v = unescaped
				}
			}
			params[name] = v
		}
		err := openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: validationOptions,
		})
		if err == nil {
			return next(c)
		}
		var me openapi3.MultiError
		if errors.As(err, &me) {
			return validationError(me)
		}
		var re *openapi3filter.RequestError
		if errors.As(err, &re) {
			// kin-openapi's messages run over several lines; the first says what is wrong.
			first, _, _ := strings.Cut(re.Error(), "\n")
			return &echo.HTTPError{Code: http.StatusBadRequest, Message: first, Internal: err}
		}
		return fmt.Errorf("server: validate request: %w", err)
	}
}

// operationRoute is kin-openapi's description of one operation of spec, as its router would
// have found it for a request, except that it requires no security: authenticate has checked the
// key already, and kin-openapi would only walk the requirements to call a no-op.
func operationRoute(spec *openapi3.T, path string, item *openapi3.PathItem, method string, op *openapi3.Operation) *routers.Route {
	checked := *op
	checked.Security = &openapi3.SecurityRequirements{}
	return &routers.Route{Spec: spec, Path: path, PathItem: item, Method: method, Operation: &checked}
}
