// Package gen holds only code generated from ../openapi.yaml by oapi-codegen: the API's models
// and the strict Echo server interface (api.gen.go, through overlay.yaml), and the embedded
// OpenAPI document as written (spec.gen.go). Never edit *.gen.go; change openapi.yaml and run
// `make generate`.
package gen

//go:generate go tool oapi-codegen -config config.yaml ../openapi.yaml
//go:generate go tool oapi-codegen -config spec.yaml ../openapi.yaml
