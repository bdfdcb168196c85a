// Package service holds Switchboard's business rules that are not plain storage: the error
// values every layer returns (each carrying the spec's error type), user tokens, and, as the
// product grows, messaging rules. It knows nothing of HTTP or of the generated API types.
package service
