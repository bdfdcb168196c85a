package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server"
)

// The suite's servers validate every response against openapi.yaml (newAPI). These specs show
// that the validation cannot pass silently: a response the contract does not describe is caught.
var _ = Describe("Response validation against openapi.yaml", func() {
	var (
		t       *tenant
		account string
		mu      sync.Mutex
		found   []error
		// answer, when set, replaces the handler's response to GET /accounts/{id}.
		answer func(echo.Context) error
	)

	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("Acme")
		found, answer = nil, nil
		collect := contract.Middleware(func(err error) { mu.Lock(); found = append(found, err); mu.Unlock() })
		forge := func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				if answer != nil && c.Request().Method == http.MethodGet && c.Path() == "/accounts/:id" {
					return answer(c)
				}
				return next(c)
			}
		}
		var err error
		t.api, err = server.New(server.Config{Core: core, RateLimit: -1, Logger: testLogger(), Now: clock.Now,
			Middleware: []echo.MiddlewareFunc{collect, forge}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(t.api.Close(ctx)).To(Succeed()) })
	})

	failures := func() string {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		for _, err := range found {
			b.WriteString(err.Error())
		}
		return b.String()
	}

	It("passes the real handlers' answers, success and error", func() {
		Expect(t.get("/accounts/" + account)).To(HaveStatus(http.StatusOK))
		Expect(t.get("/accounts/acct_01jtp4dsdq6de56aa0tfm2e5b3")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/no/such/route")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.post("/accounts", map[string]any{"name": 5})).To(HaveFieldError("name"))
		Expect(failures()).To(BeEmpty())
	})

	It("catches a field of the wrong type", func() {
		answer = func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{"id": 5}) }
		t.get("/accounts/" + account)
		Expect(failures()).To(SatisfyAll(ContainSubstring("GET /accounts/"+account), ContainSubstring(`"id"`)))
	})

	It("catches a missing required field", func() {
		answer = func(c echo.Context) error {
			return c.JSON(http.StatusOK, map[string]any{"id": account, "name": "Acme"})
		}
		t.get("/accounts/" + account)
		Expect(failures()).To(ContainSubstring(`property "organization" is missing`))
	})

	It("catches a status the operation does not declare", func() {
		answer = func(c echo.Context) error { return c.JSON(http.StatusTeapot, map[string]any{}) }
		t.get("/accounts/" + account)
		Expect(failures()).To(ContainSubstring("status is not supported"))
	})

	It("catches an error outside the envelope", func() {
		answer = func(c echo.Context) error { return c.String(http.StatusNotFound, "not found") }
		t.get("/accounts/" + account)
		Expect(failures()).To(ContainSubstring("Content-Type"))
	})

	It("catches an envelope without its message", func() {
		answer = func(c echo.Context) error {
			return c.JSON(http.StatusNotFound, map[string]any{"error": map[string]any{"type": "not_found"}})
		}
		t.get("/accounts/" + account)
		Expect(failures()).To(ContainSubstring(`property "message" is missing`))
	})
})
