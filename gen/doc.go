// Package gen holds only code generated from ../openapi.yaml by oapi-codegen: the API's models,
// the strict Echo server interface and the embedded OpenAPI document. Never edit *.gen.go; change
// openapi.yaml and run `make generate`.
package gen

//go:generate go tool oapi-codegen -config config.yaml ../openapi.yaml
