package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/switchboard/switchboard/gen"
)

// BenchmarkValidateSend validates the e2e load's send (cmd/bench/e2e_load.go) as validateRequest
// does: its account_id, its absent Idempotency-Key and its body, against the operation that
// indexRoutes keeps.
func BenchmarkValidateSend(b *testing.B) {
	spec, err := gen.GetSwagger()
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{routes: map[routeKey]string{}, public: map[routeKey]bool{}, operations: map[routeKey]*operation{}}
	registerFormats()
	s.indexRoutes(spec)
	op := s.operations[routeKey{http.MethodPost, "/accounts/:account_id/messages"}]
	body := `{"to":"+15550000123","from":"+14155550100","body":"Load test message 1"}`
	params := map[string]string{"account_id": "acct_01jtp4dsdq6de56aa0tfm2e5b3"}
	req := httptest.NewRequest(http.MethodPost, "https://switchboard.test/accounts/acct_01jtp4dsdq6de56aa0tfm2e5b3/messages", nil)
	req.Header.Set("Content-Type", "application/json")
	b.ReportAllocs()
	for b.Loop() {
		// As net/http's server hands it: a body without GetBody.
		req.Body, req.GetBody = io.NopCloser(strings.NewReader(body)), nil
		if err := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: op.route, Options: op.options,
		}); err != nil {
			b.Fatal(err)
		}
	}
}
