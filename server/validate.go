package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// validationOptions are kin-openapi's options for every request: every failure at once, no
// authentication (authenticate has done it), and the contract's patterns compiled by
// compilePattern. operationOptions adapts them to each operation.
var validationOptions = openapi3filter.Options{
	MultiError:              true,
	AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
	SchemaValidationOptions: patternOptions,
}

// patternOptions has kin-openapi compile the patterns of parameters and bodies with
// compilePattern (openapi3filter.Options.RegexCompiler reaches bodies only).
var patternOptions = []openapi3.SchemaValidationOption{openapi3.SetSchemaRegexCompiler(compilePattern)}

// operationOptions are validationOptions for op (of the path item), which:
//   - leave the validated body on the request (KeepValidatedValue) when its body schema is
//     closed (closedBody): its generated handler binds that value instead of decoding the body a
//     second time;
//   - skip the setting of defaults (SkipSettingDefaults) when no schema of its parameters or body
//     has one (setsDefaults): kin-openapi would otherwise look every property up once more, and
//     set nothing.
func operationOptions(item *openapi3.PathItem, op *openapi3.Operation) *openapi3filter.Options {
	o := validationOptions
	o.KeepValidatedValue = closedBody(op)
	o.SkipSettingDefaults = !setsDefaults(item, op)
	return &o
}

// setsDefaults reports whether a schema of op's parameters (or of the path item's) or of its
// request body, however deep, has a default, which kin-openapi sets when a request leaves the
// value out.
func setsDefaults(item *openapi3.PathItem, op *openapi3.Operation) bool {
	seen := map[*openapi3.Schema]bool{}
	var has func(ref *openapi3.SchemaRef) bool
	has = func(ref *openapi3.SchemaRef) bool {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return false
		}
		s := ref.Value
		seen[s] = true
		if s.Default != nil || has(s.Items) || has(s.Not) || has(s.AdditionalProperties.Schema) {
			return true
		}
		for _, p := range s.Properties {
			if has(p) {
				return true
			}
		}
		for _, branches := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, b := range branches {
				if has(b) {
					return true
				}
			}
		}
		return false
	}
	for _, params := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, p := range params {
			if p.Value == nil {
				continue
			}
			if has(p.Value.Schema) {
				return true
			}
			for _, mt := range p.Value.Content {
				if has(mt.Schema) {
					return true
				}
			}
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		for _, mt := range op.RequestBody.Value.Content {
			if has(mt.Schema) {
				return true
			}
		}
	}
	return false
}

// operation is what validateRequest needs of one of the contract's operations.
type operation struct {
	// route is the operation as kin-openapi's router would have found it (operationRoute).
	route *routers.Route
	// options are its operationOptions.
	options *openapi3filter.Options
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
		op := s.operations[routeOf(c)]
		if op == nil {
			return next(c)
		}
		in := validationInputs.Get().(*openapi3filter.RequestValidationInput)
		names, values := c.ParamNames(), c.ParamValues()
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
			in.PathParams[name] = v
		}
		in.Request, in.Route, in.Options = req, op.route, op.options
		err := openapi3filter.ValidateRequest(req.Context(), in)
		if err == nil {
			// Nothing kin-openapi leaves behind refers to the input (a validation error does). It
			// keeps the request's query in it (GetQueryParams): all but the map is reset.
			clear(in.PathParams)
			*in = openapi3filter.RequestValidationInput{PathParams: in.PathParams}
			validationInputs.Put(in)
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

// validationInputs are validateRequest's inputs to kin-openapi, each with its map of path
// parameters, reused: two allocations and a map's growth a request.
var validationInputs = sync.Pool{New: func() any {
	return &openapi3filter.RequestValidationInput{PathParams: make(map[string]string, 2)}
}}

// operationRoute is kin-openapi's description of one operation of spec, as its router would
// have found it for a request, except that it requires no security: authenticate has checked the
// key already, and kin-openapi would only walk the requirements to call a no-op.
func operationRoute(spec *openapi3.T, path string, item *openapi3.PathItem, method string, op *openapi3.Operation) *routers.Route {
	checked := *op
	checked.Security = &openapi3.SecurityRequirements{}
	return &routers.Route{Spec: spec, Path: path, PathItem: item, Method: method, Operation: &checked}
}

// closedBody reports whether op's JSON request body has a closed schema: every object in it
// that names properties refuses any other member (additionalProperties: false), in the branches
// of its compositions (allOf, anyOf, oneOf) too. Such a body binds the same from the value the
// validator decoded as from a second decode: encoding/json matches member names
// case-insensitively and the generated handlers' binder exactly, and a closed schema lets no
// member through whose name differs from a property's.
func closedBody(op *openapi3.Operation) bool {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return false
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	return mt != nil && closedSchema(mt.Schema, map[*openapi3.Schema]bool{})
}

// closedSchema is closedBody's walk of one schema; seen holds the schemas on the way, so that a
// recursive schema ends.
func closedSchema(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) bool {
	if ref == nil || ref.Value == nil {
		return false
	}
	s := ref.Value
	if seen[s] {
		return true
	}
	seen[s] = true
	for _, branches := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, b := range branches {
			if !closedSchema(b, seen) {
				return false
			}
		}
	}
	extra := s.AdditionalProperties
	if len(s.Properties) > 0 {
		if extra.Has == nil || *extra.Has || extra.Schema != nil {
			return false
		}
		for _, p := range s.Properties {
			if !closedSchema(p, seen) {
				return false
			}
		}
	} else if extra.Schema != nil && !closedSchema(extra.Schema, seen) {
		// A map: its keys are matched exactly either way, its values must be closed too.
		return false
	}
	return s.Items == nil || closedSchema(s.Items, seen)
}
