// Package problem is the refusal the API reports to its caller: an Error carrying the spec's
// error type slug ("validation_error", "conflict", ...). The service and its sub-packages
// (webhooks) return them; the server maps each type to an HTTP status once. It is a leaf: it
// knows nothing of HTTP, the store or the business rules.
package problem

import (
	"errors"
	"fmt"
)

// Error is a refusal the API reports to its caller: Type is the spec's error slug
// ("opted_out", "validation_error", ...). The server maps each Type to an HTTP status once.
type Error struct {
	Type    string
	Message string
	// Detail is optional structured context; for validation errors a map of field path to messages.
	Detail map[string]any
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Is lets errors.Is(err, &Error{Type: "x"}) match any Error of that type.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Type == e.Type
}

// Errorf returns an Error of the given type with a formatted message.
func Errorf(typ, format string, args ...any) *Error {
	return &Error{Type: typ, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation_error naming one field.
func Invalid(field, message string) *Error {
	return &Error{
		Type:    TypeValidation,
		Message: field + " " + message,
		Detail:  map[string]any{field: []string{message}},
	}
}

// Error types used across the domain. The full list, with HTTP statuses, is in the server's
// error mapping and in openapi.yaml.
const (
	TypeValidation      = "validation_error"
	TypeInvalidJSON     = "invalid_json"
	TypeNotFound        = "not_found"
	TypeConflict        = "conflict"
	TypeAccountArchived = "account_archived"
	TypeNotImplemented  = "not_implemented"
)
