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
	"github.com/switchboard/switchboard/store"
)

// The suite's servers validate every answer of the console's API against web/console-api.yaml
// (newAPI). These specs show that this validation cannot pass silently: an answer the description
// does not describe is caught.
var _ = Describe("Console answers against web/console-api.yaml", func() {
	var (
		t     *tenant
		c     *consoleClient
		mu    sync.Mutex
		found []error
		// answer, when set, replaces the handler's answer to the route at path.
		path   string
		answer func(echo.Context) error
	)

	BeforeEach(func() {
		t = newTenant()
		found, answer, path = nil, nil, ""
		collect := consoleContract.Middleware(func(err error) { mu.Lock(); found = append(found, err); mu.Unlock() })
		forge := func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(ec echo.Context) error {
				if answer != nil && ec.Path() == server.ConsoleAPIPath+path {
					return answer(ec)
				}
				return next(ec)
			}
		}
		s, err := server.New(server.Config{Core: core, RateLimit: -1, Logger: testLogger(), Now: clock.Now,
			Middleware: []echo.MiddlewareFunc{collect, forge}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(s.Close(ctx)).To(Succeed()) })
		c = newConsoleClient()
		c.api = s
		Expect(c.login(newConsoleUser(t.ProjectID, store.RoleOwner), consolePassword, "")).To(HaveStatus(http.StatusOK))
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

	It("passes the real handlers' answers, successes and refusals", func() {
		Expect(c.get("/me")).To(HaveStatus(http.StatusOK))
		Expect(c.get("/projects/" + t.ProjectID + "/keys")).To(HaveStatus(http.StatusOK))
		Expect(c.post("/projects/"+t.ProjectID+"/keys", map[string]any{})).To(HaveStatus(http.StatusCreated))
		Expect(c.get("/projects/prj_01jtp4dsdq6de56aa0tfm2e5b3/keys")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.post("/projects/"+t.ProjectID+"/webhooks", map[string]any{"url": 5})).To(HaveFieldError("url"))
		Expect(c.get("/no/such/route")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(newConsoleClient().get("/me")).To(HaveStatus(http.StatusUnauthorized), "the suite's own server")
		Expect(failures()).To(BeEmpty())
	})

	It("leaves the bridge's answers to the public contract", func() {
		path, answer = "/projects/:project/api/*", func(ec echo.Context) error { return ec.JSON(http.StatusOK, map[string]any{"id": 5}) }
		c.get("/projects/" + t.ProjectID + "/api/accounts")
		Expect(failures()).To(BeEmpty())
	})

	It("catches a field of the wrong type", func() {
		path, answer = "/projects/:project/keys", func(ec echo.Context) error {
			return ec.JSON(http.StatusOK, map[string]any{"data": []any{map[string]any{"id": 5}},
				"pagination": map[string]any{"next_cursor": nil, "previous_cursor": nil}})
		}
		c.get("/projects/" + t.ProjectID + "/keys")
		Expect(failures()).To(SatisfyAll(ContainSubstring("GET /console/api/projects/"+t.ProjectID+"/keys"),
			ContainSubstring("web/console-api.yaml"), ContainSubstring(`"id"`)))
	})

	It("catches a missing required field", func() {
		path, answer = "/me", func(ec echo.Context) error {
			return ec.JSON(http.StatusOK, map[string]any{"user": map[string]any{"id": "opr_x", "email": "a@b.test", "totp_enabled": false,
				"password_change_required": false, "last_login_at": nil}, "session_expires_at": "2026-01-15T18:04:05Z",
				"projects": []any{}, "simulated_carrier": true})
		}
		c.get("/me")
		Expect(failures()).To(ContainSubstring(`property "csrf_token" is missing`))
	})

	It("catches a value outside its enum", func() {
		path, answer = "/projects/:project/deliveries", func(ec echo.Context) error {
			return ec.JSON(http.StatusOK, map[string]any{"data": []any{map[string]any{"id": "whd_x", "endpoint_id": "whe_x", "event_id": "evt_x",
				"event_type": "message.sent", "status": "lost", "attempts": 1, "last_status": nil, "last_error": nil, "next_attempt_at": nil,
				"delivered_at": nil, "created_at": "2026-01-15T18:04:05Z", "updated_at": "2026-01-15T18:04:05Z"}},
				"pagination": map[string]any{"next_cursor": nil, "previous_cursor": nil}})
		}
		c.get("/projects/" + t.ProjectID + "/deliveries")
		Expect(failures()).To(ContainSubstring(`"lost"`))
	})

	It("catches a status the operation does not declare", func() {
		path, answer = "/me", func(ec echo.Context) error { return ec.JSON(http.StatusTeapot, map[string]any{}) }
		c.get("/me")
		Expect(failures()).To(ContainSubstring("status is not supported"))
	})

	It("catches a success on a route it does not describe", func() {
		path, answer = "/*", func(ec echo.Context) error { return ec.JSON(http.StatusOK, map[string]any{}) }
		c.get("/projects/" + t.ProjectID + "/undocumented")
		Expect(failures()).To(ContainSubstring("a route or method that the contract does not have"))
	})

	It("catches an error outside the envelope", func() {
		path, answer = "/projects/:project/keys", func(ec echo.Context) error {
			return ec.JSON(http.StatusForbidden, map[string]any{"message": "no"})
		}
		c.get("/projects/" + t.ProjectID + "/keys")
		Expect(failures()).To(ContainSubstring(`property "error" is missing`))
	})
})
