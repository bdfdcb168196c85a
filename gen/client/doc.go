// Package client is a Go client of the API generated from ../../openapi.yaml by oapi-codegen, the
// version go.mod pins, as a user of the contract would generate it. The server never imports it:
// it exists so that the test suite shows that such a client compiles and works against the real
// server (server/client_test.go). Never edit client.gen.go; run `make generate`.
package client

//go:generate go tool oapi-codegen -config config.yaml ../../openapi.yaml
