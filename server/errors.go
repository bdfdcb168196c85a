package server

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// statusOf maps every error type the API answers with to its HTTP status. An error type that is
// missing here is a programming error and answers 500.
var statusOf = map[string]int{
	service.TypeInvalidJSON:      http.StatusBadRequest,
	"missing_api_key":            http.StatusUnauthorized,
	"invalid_api_key":            http.StatusUnauthorized,
	"demo_api_key":               http.StatusForbidden,
	"platform_locked":            http.StatusForbidden,
	"demo_message_limit":         http.StatusForbidden,
	"https_required":             http.StatusForbidden,
	service.TypeMissingToken:     http.StatusUnauthorized,
	service.TypeInvalidToken:     http.StatusUnauthorized,
	service.TypeTokenExpired:     http.StatusUnauthorized,
	service.TypeNotFound:         http.StatusNotFound,
	"method_not_allowed":         http.StatusMethodNotAllowed,
	service.TypeConflict:         http.StatusConflict,
	"idempotency_key_in_use":     http.StatusConflict,
	"request_too_large":          http.StatusRequestEntityTooLarge,
	"unsupported_media_type":     http.StatusUnsupportedMediaType,
	"range_not_satisfiable":      http.StatusRequestedRangeNotSatisfiable,
	"precondition_failed":        http.StatusPreconditionFailed,
	service.TypeValidation:       http.StatusUnprocessableEntity,
	"idempotency_key_reused":     http.StatusUnprocessableEntity,
	"opted_out":                  http.StatusUnprocessableEntity,
	"outbound_disabled":          http.StatusUnprocessableEntity,
	"no_phone_number":            http.StatusUnprocessableEntity,
	"phone_number_not_found":     http.StatusUnprocessableEntity,
	"campaign_required":          http.StatusUnprocessableEntity,
	"toll_free_unverified":       http.StatusUnprocessableEntity,
	"short_code_not_purchasable": http.StatusUnprocessableEntity,
	"number_not_available":       http.StatusUnprocessableEntity,
	service.TypeAccountArchived:  http.StatusUnprocessableEntity,
	"carrier_unsupported":        http.StatusUnprocessableEntity,
	"message_too_long":           http.StatusUnprocessableEntity,
	"attachment_unreachable":     http.StatusUnprocessableEntity,
	"rate_limited":               http.StatusTooManyRequests,
	"internal_error":             http.StatusInternalServerError,
	service.TypeNotImplemented:   http.StatusNotImplemented,
	"not_ready":                  http.StatusServiceUnavailable,
	"service_unavailable":        http.StatusServiceUnavailable,

	// A carrier callback's refusal (carrierRoute).
	"forbidden": http.StatusForbidden,
	// Written below the handlers, by the listener's connections (envelopeConn).
	"invalid_request":               http.StatusBadRequest,
	"expectation_failed":            http.StatusExpectationFailed,
	"request_header_too_large":      http.StatusRequestHeaderFieldsTooLarge,
	"unsupported_transfer_encoding": http.StatusNotImplemented,
	"http_version_not_supported":    http.StatusHTTPVersionNotSupported,
}

// statusClientClosed records a request whose client disconnected before the answer.
const statusClientClosed = 499

// errorBody is the spec's error envelope.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Type    string         `json:"type"`
	Message string         `json:"message"`
	Detail  map[string]any `json:"detail,omitempty"`
}

// toAPIError reduces any error to the one the client sees.
func toAPIError(err error) *service.Error {
	var (
		se      *service.Error
		cursor  *store.CursorError
		httpErr *echo.HTTPError
	)
	switch {
	case errors.As(err, &se):
		return se
	case errors.Is(err, store.ErrIdempotencyClaimLost):
		return &service.Error{Type: "idempotency_key_in_use", Message: "Another request with this Idempotency-Key took over while this one waited; it answers for the key."}
	case errors.Is(err, store.ErrNotFound):
		return &service.Error{Type: service.TypeNotFound, Message: "No such resource."}
	case errors.As(err, &cursor):
		if cursor.Reason != "" {
			return service.Invalid(cursor.Param, cursor.Reason)
		}
		return service.Invalid(cursor.Param, "is not a cursor returned by this API")
	case errors.As(err, &httpErr):
		return fromHTTPError(httpErr)
	case store.Unavailable(err):
		return errUnavailable
	}
	return nil
}

// errUnavailable answers a request that failed because the database (or another service the
// request needs) cannot be reached right now: 503 with Retry-After, which clients retry,
// unlike the 500 of a real failure.
var errUnavailable = &service.Error{Type: "service_unavailable",
	Message: "The service is briefly unavailable (its database cannot be reached); retry after the Retry-After header's seconds."}

// unavailableRetryAfter is the Retry-After of a 503, in seconds: about as long as a database
// failover or restart takes to accept connections again.
const unavailableRetryAfter = "2"

func fromHTTPError(he *echo.HTTPError) *service.Error {
	if he.Internal != nil {
		if se := toAPIError(he.Internal); se != nil {
			return se
		}
	}
	msg := fmt.Sprint(he.Message)
	switch he.Code {
	case http.StatusNotFound:
		return &service.Error{Type: service.TypeNotFound, Message: "No such route."}
	case http.StatusMethodNotAllowed:
		return &service.Error{Type: "method_not_allowed", Message: "This route does not accept this method."}
	case http.StatusRequestEntityTooLarge:
		return &service.Error{Type: "request_too_large", Message: "The request body is larger than this route accepts (1 MiB; 4 MiB to create a blast)."}
	case http.StatusUnsupportedMediaType:
		return &service.Error{Type: "unsupported_media_type", Message: "Request bodies must be application/json."}
	case http.StatusBadRequest:
		return &service.Error{Type: service.TypeInvalidJSON, Message: "The request body is not valid JSON: " + msg}
	case http.StatusTooManyRequests:
		return &service.Error{Type: "rate_limited", Message: "Too many requests."}
	}
	return nil
}

// handleError is Echo's HTTPErrorHandler: every error, from any layer, leaves here in the envelope.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if c.Request().Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, driver.ErrBadConn)) {
		// The client went away: nobody reads this answer. 499 (nginx's "client closed request")
		// keeps it apart from real server errors in metrics and logs. Inside a transaction, pgx's
		// database/sql driver refuses a statement whose context is done with driver.ErrBadConn
		// (its "safe to retry"), which database/sql passes on as it is.
		s.log.Debug("client closed the request", "request_id", requestID(c), "path", c.Request().URL.Path)
		c.Response().WriteHeader(statusClientClosed)
		return
	}
	apiErr := toAPIError(err)
	status := http.StatusInternalServerError
	if apiErr != nil {
		if st, ok := statusOf[apiErr.Type]; ok {
			status = st
		} else if st, ok := consoleStatus[apiErr.Type]; ok {
			status = st
		} else {
			s.log.Error("error type without a status", "type", apiErr.Type)
			apiErr = nil
		}
	}
	if apiErr == nil {
		s.log.Error("internal error", "request_id", requestID(c), "method", c.Request().Method,
			"path", c.Request().URL.Path, "err", err)
		apiErr = &service.Error{Type: "internal_error", Message: "An internal error occurred. Quote the X-Request-Id header when reporting it."}
	}
	c.Set(errorTypeKey, apiErr.Type)
	h := c.Response().Header()
	switch status {
	case http.StatusConflict:
		h.Set("X-Should-Retry", "false")
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", unavailableRetryAfter)
		if apiErr == errUnavailable {
			s.log.Warn("database unavailable", "request_id", requestID(c), "method", c.Request().Method,
				"path", c.Request().URL.Path, "err", err)
		}
	}
	// Whatever the failed handler had set for its own answer (a file's type and disposition)
	// does not describe the envelope.
	for _, name := range []string{echo.HeaderContentType, echo.HeaderContentLength, echo.HeaderContentDisposition, "Etag", echo.HeaderLastModified} {
		h.Del(name)
	}
	if werr := c.JSON(status, errorBody{Error: errorObject{Type: apiErr.Type, Message: apiErr.Message, Detail: apiErr.Detail}}); werr != nil {
		s.log.Debug("write error response", "err", werr)
	}
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// validationError turns the request validator's findings into one validation_error whose detail
// maps each field path to its messages, or into invalid_json when the body did not parse.
func validationError(me openapi3.MultiError) *echo.HTTPError {
	detail := map[string]any{}
	// typed are the fields whose failure has an error type of its own (x-error-type).
	typed := map[string]*service.Error{}
	add := func(field, msg string) {
		list, _ := detail[field].([]string)
		detail[field] = append(list, msg)
	}
	var walk func(err error, field string)
	walk = func(err error, field string) {
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, inner := range e {
				walk(inner, field)
			}
		case *openapi3filter.RequestError:
			switch {
			case e.Parameter != nil:
				field = e.Parameter.Name
			case e.RequestBody != nil:
				field = ""
			}
			if e.Err == nil {
				add(orBody(field), e.Reason)
				return
			}
			walk(e.Err, field)
		case *openapi3.SchemaError:
			path := strings.Join(e.JSONPointer(), ".")
			var inner openapi3.MultiError
			if e.SchemaField == "allOf" && errors.As(e.Origin, &inner) {
				// A nullable property wraps its schema in allOf: name what failed inside it (the
				// inner errors carry the whole path).
				walk(inner, field)
				return
			}
			if m := unsupportedProperty.FindStringSubmatch(e.Reason); m != nil {
				path = strings.TrimPrefix(path+"."+m[1], ".")
				add(joinField(field, path), "is not a recognized field")
				return
			}
			name := orBody(joinField(field, path))
			add(name, describeSchemaError(e))
			if t := typedError(e, name); t != nil {
				typed[name] = t
			}
		case *openapi3filter.ParseError:
			add(orBody(field), "cannot be parsed: "+e.Reason)
		default:
			add(orBody(field), err.Error())
		}
	}
	for _, err := range me {
		// A body without Content-Length that outgrows the limit fails while the validator reads it.
		var tooLarge *echo.HTTPError
		if errors.As(err, &tooLarge) && tooLarge.Code == http.StatusRequestEntityTooLarge {
			return &echo.HTTPError{Code: http.StatusRequestEntityTooLarge}
		}
		var nul *nulError
		if errors.As(err, &nul) {
			for field, msg := range nul.fields {
				add(field, msg)
			}
			continue
		}
		var reqErr *openapi3filter.RequestError
		var parse *openapi3filter.ParseError
		if errors.As(err, &reqErr) && reqErr.RequestBody != nil && errors.As(err, &parse) {
			return &echo.HTTPError{Code: http.StatusBadRequest, Internal: &service.Error{
				Type: service.TypeInvalidJSON, Message: "The request body is not valid JSON."}}
		}
		walk(err, "")
	}
	if len(typed) == len(detail) {
		for _, t := range typed {
			// One field, or several that fail alike: the first is enough.
			return &echo.HTTPError{Code: statusOf[t.Type], Internal: t}
		}
	}
	return &echo.HTTPError{Code: http.StatusUnprocessableEntity, Internal: &service.Error{
		Type: service.TypeValidation, Message: "The request is invalid; see detail for each field.", Detail: detail}}
}

// typedError is the error of a failed maxLength whose schema names its own error type with the
// extension x-error-type (a message body's message_too_long), so that a request failing only there
// answers that type rather than validation_error.
func typedError(e *openapi3.SchemaError, field string) *service.Error {
	if e.Schema == nil {
		return nil
	}
	typ, _ := e.Schema.Extensions["x-error-type"].(string)
	if typ == "" || e.SchemaField != "maxLength" || e.Schema.MaxLength == nil {
		return nil
	}
	if _, known := statusOf[typ]; !known {
		return nil
	}
	return &service.Error{Type: typ, Message: fmt.Sprintf("the %s is longer than %d characters", field, *e.Schema.MaxLength)}
}

var unsupportedProperty = regexp.MustCompile(`^property "(.+)" is unsupported$`)

func joinField(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

func orBody(field string) string {
	if field == "" {
		return "body"
	}
	return field
}

// describeSchemaError words a schema failure for API users, naming the format that a pattern stands for.
func describeSchemaError(e *openapi3.SchemaError) string {
	if e.SchemaField == "pattern" && e.Schema != nil {
		if what := patternNames[e.Schema.Pattern]; what != "" {
			return "is not a valid " + what
		}
		if p := e.Schema.Pattern; strings.HasPrefix(p, "^") && strings.Contains(p, "_[0-7]") {
			return "is not a valid " + strings.TrimPrefix(p[:strings.Index(p, "_[0-7]")], "^") + "_ id"
		}
	}
	if e.SchemaField == "format" && e.Schema != nil {
		if what := formatNames[e.Schema.Format]; what != "" {
			return "is not a valid " + what
		}
	}
	return e.Reason
}

var formatNames = map[string]string{
	"email":     "email address",
	"uri":       "absolute http(s) URL",
	"date-time": "RFC 3339 date-time",
}

var patternNames = map[string]string{
	`^\+[1-9]\d{6,14}$`:         "E.164 phone number",
	`^\d{5,6}$`:                 "short code",
	`^([01]\d|2[0-3]):[0-5]\d$`: "time of day (HH:MM, 00:00 to 23:59)",
}
