package service

import (
	"github.com/switchboard/switchboard/service/problem"
	"github.com/switchboard/switchboard/store"
)

// Error is a refusal the API reports to its caller: Type is the spec's error slug
// ("opted_out", "validation_error", ...). It is problem.Error, which the domain's packages
// (webhooks) share; the server maps each Type to an HTTP status once.
type Error = problem.Error

// Errorf returns an Error of the given type with a formatted message.
func Errorf(typ, format string, args ...any) *Error { return problem.Errorf(typ, format, args...) }

// Invalid returns a validation_error naming one field.
func Invalid(field, message string) *Error { return problem.Invalid(field, message) }

// Error types used across the service (problem's). The full list, with HTTP statuses, is in the
// server's error mapping and in openapi.yaml.
const (
	TypeValidation      = problem.TypeValidation
	TypeInvalidJSON     = problem.TypeInvalidJSON
	TypeNotFound        = problem.TypeNotFound
	TypeConflict        = problem.TypeConflict
	TypeAccountArchived = problem.TypeAccountArchived
	TypeNotImplemented  = problem.TypeNotImplemented
)

// ErrNotImplemented answers operations that a later release builds.
var ErrNotImplemented = &Error{Type: TypeNotImplemented, Message: "this operation is not implemented yet"}

// Changeable refuses a change to an archived account (422 account_archived): the check every
// writer of an account's settings (API, console, CLI) makes inside its update.
func Changeable(a *store.Account) error {
	if a.ArchivedAt != nil {
		return Errorf(TypeAccountArchived, "account %s is archived and cannot be changed", a.ID)
	}
	return nil
}
