// Package server is Switchboard's HTTP layer: the Echo stack that validates every request against
// the embedded OpenAPI document, authenticates API keys, renders every error in the spec's
// envelope, and implements the generated strict-server interface with thin handlers (one file per
// resource) over the store and the service packages. It holds no business rules of its own.
package server
