package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen"
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
					// It answers before the request id middleware runs: set what it would.
					c.Response().Header().Set(echo.HeaderXRequestID, "req_forged")
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

var _ = Describe("Webhook event schemas in openapi.yaml", func() {
	It("are each the body of a callback, so that generators that prune unreferenced schemas keep them", func() {
		spec, err := gen.GetSwagger()
		Expect(err).NotTo(HaveOccurred())
		bodies := map[string]string{}
		for _, item := range spec.Paths.Map() {
			for _, op := range item.Operations() {
				for name, cb := range op.Callbacks {
					for _, path := range cb.Value.Keys() {
						post := cb.Value.Value(path).Post
						Expect(post).NotTo(BeNil(), name)
						ref := post.RequestBody.Value.Content.Get("application/json").Schema.Ref
						bodies[name] = strings.TrimPrefix(ref, "#/components/schemas/")
					}
				}
			}
		}
		Expect(bodies).To(Equal(eventSchemas), "one callback per event type, with its event's schema")
	})

	DescribeTable("require in data what the event table requires",
		func(typ, field string) {
			data := map[string]any{
				"id": "msg_01jtp4dsdq6de56aa0tfm2e5b3", "body": "Hi", "metadata": map[string]any{}, "status": "delivered",
				"conversation": map[string]any{"id": "cnv_01jtp4dsdq6de56aa0tfm2e5b3",
					"contact": map[string]any{"id": "ctc_01jtp4dsdq6de56aa0tfm2e5b3", "phone_number": "+14155550100",
						"metadata": map[string]any{}, "outbound_disabled": false, "opted_out": false, "created_at": "2026-01-15T18:04:05Z"},
					"phone_number": map[string]any{"id": "pn_01jtp4dsdq6de56aa0tfm2e5b3", "metadata": map[string]any{}, "name": nil, "number": "+14155550101", "type": "local"}},
				"sent_at": "2026-01-15T18:04:05Z", "delivered_at": "2026-01-15T18:04:06Z", "failed_at": "2026-01-15T18:04:06Z",
				"failure_reason": "carrier_filtered", "received_at": "2026-01-15T18:04:05Z",
			}
			switch typ {
			case "message.failed":
				data["status"] = "failed"
			case "message.received":
				data["status"] = "received"
			case "message.sent":
				data["status"] = "sent"
			}
			event := func() []byte {
				b, _ := json.Marshal(map[string]any{"account_id": "acct_01jtp4dsdq6de56aa0tfm2e5b3", "type": typ,
					"timestamp": "2026-01-15T18:04:06Z", "data": data})
				return b
			}
			Expect(conformsTo(event(), eventSchemas[typ])).To(Succeed())
			delete(data, field)
			Expect(conformsTo(event(), eventSchemas[typ])).To(MatchError(ContainSubstring(field)))
			Expect(conformsTo(event(), "WebhookEvent")).NotTo(Succeed())
		},
		Entry(nil, "message.sent", "sent_at"),
		Entry(nil, "message.delivered", "delivered_at"),
		Entry(nil, "message.failed", "failed_at"),
		Entry(nil, "message.failed", "failure_reason"),
		Entry(nil, "message.received", "received_at"),
		Entry(nil, "message.delivered", "conversation"),
	)
})

var _ = Describe("What openapi.yaml declares of every response", func() {
	var spec *openapi3.T
	BeforeEach(func() {
		var err error
		spec, err = gen.GetSwagger()
		Expect(err).NotTo(HaveOccurred())
	})

	It("gives every operation the shared 405, 413, 431 and, behind a key, 429 responses", func() {
		for path, item := range spec.Paths.Map() {
			for method, op := range item.Operations() {
				want := []string{"405", "413", "431"}
				if op.Security == nil || len(*op.Security) > 0 {
					want = append(want, "429")
				}
				for _, code := range want {
					Expect(op.Responses.Value(code)).NotTo(BeNil(), "%s %s %s", method, path, code)
				}
			}
		}
	})

	It("declares X-Request-Id on every response, x-should-retry on a 409 and Retry-After on a 429", func() {
		for path, item := range spec.Paths.Map() {
			for method, op := range item.Operations() {
				for code, r := range op.Responses.Map() {
					Expect(r.Value.Headers).To(HaveKey("X-Request-Id"), "%s %s %s", method, path, code)
					Expect(r.Value.Headers["X-Request-Id"].Value.Required).To(BeTrue())
					switch code {
					case "409":
						Expect(r.Value.Headers).To(HaveKey("x-should-retry"), "%s %s", method, path)
					case "429":
						Expect(r.Value.Headers).To(HaveKeyWithValue("Retry-After", HaveField("Value.Required", BeTrue())), "%s %s", method, path)
					}
				}
			}
		}
	})

	It("lists every campaign status Surge's SDK types have", func() {
		Expect(spec.Components.Schemas["CampaignStatus"].Value.Enum).To(ContainElements(
			"active", "canceled", "created", "deactivated", "in_review", "rejected"))
	})

	It("checks the declared headers: a response without X-Request-Id breaks the contract", func() {
		req := httptest.NewRequest(http.MethodGet, "https://switchboard.test/accounts", nil)
		body := []byte(`{"data":[],"pagination":{"next_cursor":null,"previous_cursor":null}}`)
		h := http.Header{"Content-Type": {"application/json"}}
		Expect(contract.Check(req, http.StatusOK, h, body)).To(MatchError(ContainSubstring("X-Request-Id")))
		h.Set("X-Request-Id", "req_01jtp4dsdq6de56aa0tfm2e5b3")
		Expect(contract.Check(req, http.StatusOK, h, body)).To(Succeed())
	})
})
