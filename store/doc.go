// Package store is Switchboard's persistence layer: gorm models, versioned migrations and the
// queries the API needs, on SQLite (the embedded default) and PostgreSQL.
//
// Every query that reads or changes a tenant's data takes the caller's project id, so a resource
// of another project is indistinguishable from a missing one (ErrNotFound). The store knows
// nothing of HTTP or of the OpenAPI types; the server converts.
package store
