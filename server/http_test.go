package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/store"
)

// streamRequest sends body without a Content-Length (as a chunked upload arrives), so that only
// reading it tells how large it is.
func (t *tenant) streamRequest(method, path string, body io.Reader, headers ...string) *response {
	req := httptest.NewRequest(method, "https://switchboard.test"+path, io.MultiReader(body))
	Expect(req.ContentLength).To(BeNumerically("<=", 0))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.Key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	t.api.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// accountCount is the number of accounts in the tenant's project, read through the API.
func (t *tenant) accountCount() int {
	r := t.get("/accounts?limit=100")
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	return len(r.JSON()["data"].([]any))
}

// oversizedAccount is a create body just over the 1 MiB limit.
func oversizedAccount() string {
	return `{"name":"` + strings.Repeat("a", 1<<20) + `"}`
}

var _ = Describe("HTTP conventions", func() {
	var t *tenant
	BeforeEach(func() { t = newTenant() })

	Describe("routing", func() {
		It("answers 404 not_found in the error envelope for an unknown route, with or without a key", func() {
			Expect(t.get("/nope")).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.withKey("").get("/accounts/" + store.NewID("acct") + "/teleport")).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.post("/v1/accounts", map[string]any{"name": "Acme"})).To(HaveError(http.StatusNotFound, "not_found"))
		})

		DescribeTable("answers 405 method_not_allowed with an Allow header for a known route's wrong method",
			func(method, path string, allowed ...string) {
				r := t.request(method, path, nil)
				Expect(r).To(HaveError(http.StatusMethodNotAllowed, "method_not_allowed"))
				for _, m := range allowed {
					Expect(r.Header.Get("Allow")).To(ContainSubstring(m))
				}
				Expect(r.Header.Get("Allow")).NotTo(ContainSubstring(method))
			},
			Entry("PUT /accounts", http.MethodPut, "/accounts", "GET", "POST"),
			Entry("DELETE /accounts", http.MethodDelete, "/accounts", "GET", "POST"),
			Entry("POST /accounts/{id}", http.MethodPost, "/accounts/"+store.NewID("acct"), "GET", "PATCH", "DELETE"),
			Entry("PUT /healthz", http.MethodPut, "/healthz", "GET"),
		)
	})

	Describe("request bodies", func() {
		It("refuses a body over 1 MiB with 413 request_too_large", func() {
			Expect(t.post("/accounts", oversizedAccount())).To(HaveError(http.StatusRequestEntityTooLarge, "request_too_large"))
			Expect(t.accountCount()).To(BeZero())
		})

		It("refuses a body over 1 MiB sent without a Content-Length with 413 request_too_large", func() {
			Expect(t.streamRequest(http.MethodPost, "/accounts", strings.NewReader(oversizedAccount()))).
				To(HaveError(http.StatusRequestEntityTooLarge, "request_too_large"))
			Expect(t.streamRequest(http.MethodPost, "/accounts", strings.NewReader(oversizedAccount()), "Idempotency-Key", "big-1")).
				To(HaveError(http.StatusRequestEntityTooLarge, "request_too_large"))
			Expect(t.accountCount()).To(BeZero())
		})

		It("accepts a body sent without a Content-Length under the limit", func() {
			r := t.streamRequest(http.MethodPost, "/accounts", strings.NewReader(`{"name":"Streamed"}`))
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		})

		It("accepts a body of exactly 1 MiB", func() {
			// Every string has a cap, so the bulk is whitespace between the JSON tokens.
			prefix, suffix := `{"name":"Acme"`, `}`
			body := prefix + strings.Repeat(" ", 1<<20-len(prefix)-len(suffix)) + suffix
			Expect(body).To(HaveLen(1 << 20))
			r := t.post("/accounts", body)
			Expect(r).To(HaveStatus(http.StatusCreated), string(r.Body[:min(len(r.Body), 300)]))
			r = t.streamRequest(http.MethodPost, "/accounts", strings.NewReader(body))
			Expect(r).To(HaveStatus(http.StatusCreated), string(r.Body[:min(len(r.Body), 300)]))
		})

		DescribeTable("answers 400 invalid_json for a body that is not JSON",
			func(body string) {
				Expect(t.post("/accounts", body)).To(HaveError(http.StatusBadRequest, "invalid_json"))
			},
			Entry("truncated", `{"name":"Acme"`),
			Entry("not JSON at all", `hello`),
			Entry("two objects", `{"name":"a"}{"name":"b"}`),
			Entry("a bare key", `{name:"Acme"}`),
		)

		It("refuses a JSON body that is not an object with 422", func() {
			Expect(t.post("/accounts", `["Acme"]`)).To(HaveFieldError("body"))
		})

		It("refuses a missing body with 422", func() {
			Expect(t.post("/accounts", ``)).To(HaveFieldError("body"))
		})

		DescribeTable("refuses a body that is not declared as JSON with 422 naming the body",
			func(contentType string) {
				r := t.post("/accounts", `{"name":"Acme"}`, "Content-Type", contentType)
				Expect(r).To(HaveFieldError("body"))
				Expect(t.accountCount()).To(BeZero())
			},
			Entry("text/plain", "text/plain"),
			Entry("a form", "application/x-www-form-urlencoded"),
			Entry("no Content-Type", ""),
		)

		It("accepts application/json with a charset", func() {
			Expect(t.post("/accounts", `{"name":"Acme"}`, "Content-Type", "application/json; charset=utf-8")).To(HaveStatus(http.StatusCreated))
		})
	})

	Describe("X-Request-Id", func() {
		DescribeTable("is on every response, success or error",
			func(send func(t *tenant) *response, status int) {
				r := send(t)
				Expect(r).To(HaveStatus(status), r.String())
				Expect(r.Header.Get("X-Request-Id")).To(MatchRegexp(`^req_[0-7][0-9a-hjkmnp-tv-z]{25}$`))
			},
			Entry("200", func(t *tenant) *response { return t.get("/accounts") }, http.StatusOK),
			Entry("201", func(t *tenant) *response { return t.post("/accounts", map[string]any{"name": "A"}) }, http.StatusCreated),
			Entry("public 200", func(t *tenant) *response { return t.withKey("").get("/healthz") }, http.StatusOK),
			Entry("400", func(t *tenant) *response { return t.post("/accounts", "{") }, http.StatusBadRequest),
			Entry("401", func(t *tenant) *response { return t.withKey("").get("/accounts") }, http.StatusUnauthorized),
			Entry("404 route", func(t *tenant) *response { return t.get("/nope") }, http.StatusNotFound),
			Entry("404 resource", func(t *tenant) *response { return t.get("/accounts/" + store.NewID("acct")) }, http.StatusNotFound),
			Entry("405", func(t *tenant) *response { return t.request(http.MethodPut, "/accounts", nil) }, http.StatusMethodNotAllowed),
			Entry("413", func(t *tenant) *response { return t.post("/accounts", oversizedAccount()) }, http.StatusRequestEntityTooLarge),
			Entry("422", func(t *tenant) *response { return t.post("/accounts", map[string]any{}) }, http.StatusUnprocessableEntity),
		)

		It("differs between requests", func() {
			Expect(t.get("/accounts").Header.Get("X-Request-Id")).NotTo(Equal(t.get("/accounts").Header.Get("X-Request-Id")))
		})

		It("keeps a client's plain request id", func() {
			Expect(t.get("/accounts", "X-Request-Id", "client-trace-42").Header.Get("X-Request-Id")).To(Equal("client-trace-42"))
		})

		DescribeTable("replaces a client's request id that is unfit for logs",
			func(id string) {
				Expect(t.get("/accounts", "X-Request-Id", id).Header.Get("X-Request-Id")).To(MatchRegexp(`^req_[0-7][0-9a-hjkmnp-tv-z]{25}$`))
			},
			Entry("too long", strings.Repeat("a", 129)),
			Entry("with spaces", "a b"),
			Entry("with non-ASCII", "tracé"),
		)
	})

	Describe("409 responses", func() {
		It("carry x-should-retry: false", func() {
			account := t.createAccount("Acme")
			body := map[string]any{"phone_number": "+14155550123"}
			Expect(t.post("/accounts/"+account+"/contacts", body)).To(HaveStatus(http.StatusCreated))
			r := t.post("/accounts/"+account+"/contacts", body)
			Expect(r).To(HaveError(http.StatusConflict, "conflict"))
			Expect(r.Header.Get("X-Should-Retry")).To(Equal("false"))
		})
	})

	Describe("rate limiting", func() {
		var limited *tenant
		BeforeEach(func() {
			limited = newTenant()
			limited.api = newAPI(server.Config{RateLimit: 1, RateBurst: 2})
		})

		It("answers 429 rate_limited with Retry-After and RateLimit headers once the burst is spent", func() {
			first := limited.get("/accounts")
			Expect(first).To(HaveStatus(http.StatusOK))
			Expect(first.Header.Get("RateLimit-Limit")).To(Equal("2"), "the bucket size")
			Expect(first.Header.Get("RateLimit-Remaining")).To(Equal("1"))
			Expect(limited.get("/accounts")).To(HaveStatus(http.StatusOK))

			r := limited.get("/accounts")
			Expect(r).To(HaveError(http.StatusTooManyRequests, "rate_limited"))
			retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
			Expect(err).NotTo(HaveOccurred(), "Retry-After %q", r.Header.Get("Retry-After"))
			Expect(retry).To(BeNumerically(">=", 1))
			Expect(r.Header.Get("RateLimit-Limit")).To(Equal("2"))
			Expect(r.Header.Get("RateLimit-Remaining")).To(Equal("0"))
			reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset"))
			Expect(err).NotTo(HaveOccurred())
			Expect(reset).To(BeNumerically(">=", 1))
			Expect(r.Header.Get("X-Request-Id")).NotTo(BeEmpty())
		})

		It("does not execute a refused request", func() {
			Expect(limited.post("/accounts", map[string]any{"name": "One"})).To(HaveStatus(http.StatusCreated))
			Expect(limited.post("/accounts", map[string]any{"name": "Two"})).To(HaveStatus(http.StatusCreated))
			Expect(limited.post("/accounts", map[string]any{"name": "Three"})).To(HaveError(http.StatusTooManyRequests, "rate_limited"))
			Expect(t.withKey(limited.Key).accountCount()).To(Equal(2))
		})

		It("limits each key on its own", func() {
			for range 2 {
				Expect(limited.get("/accounts")).To(HaveStatus(http.StatusOK))
			}
			Expect(limited.get("/accounts")).To(HaveError(http.StatusTooManyRequests, "rate_limited"))

			_, secret, err := st.CreateAPIKey(context.Background(), limited.ProjectID, false)
			Expect(err).NotTo(HaveOccurred())
			Expect(limited.withKey(secret).get("/accounts")).To(HaveStatus(http.StatusOK))
			other := newTenant()
			other.api = limited.api
			Expect(other.get("/accounts")).To(HaveStatus(http.StatusOK))
		})

		It("lets requests through again once the bucket refills", func() {
			for range 2 {
				Expect(limited.get("/accounts")).To(HaveStatus(http.StatusOK))
			}
			Expect(limited.get("/accounts")).To(HaveStatus(http.StatusTooManyRequests))
			Eventually(func() *response { return limited.get("/accounts") }).
				WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).
				Should(HaveStatus(http.StatusOK))
		})

		It("defaults to a bucket of 200 and never reports more remaining than the limit", func() {
			defaults := newTenant()
			defaults.api = newAPI(server.Config{})
			r := defaults.get("/accounts")
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.Header.Get("RateLimit-Limit")).To(Equal("200"))
			limit, _ := strconv.Atoi(r.Header.Get("RateLimit-Limit"))
			remaining, err := strconv.Atoi(r.Header.Get("RateLimit-Remaining"))
			Expect(err).NotTo(HaveOccurred())
			Expect(remaining).To(SatisfyAll(BeNumerically(">=", limit-2), BeNumerically("<", limit)))
		})

		It("does not limit public routes", func() {
			for range 5 {
				Expect(limited.withKey("").get("/healthz")).To(HaveStatus(http.StatusOK))
			}
		})
	})

	Describe("Idempotency-Key", func() {
		It("replays the first response to the same key and body without executing again", func() {
			body := map[string]any{"name": "Once"}
			first := t.post("/accounts", body, "Idempotency-Key", "create-once")
			Expect(first).To(HaveStatus(http.StatusCreated), first.String())
			Expect(first.Header.Get("Idempotent-Replayed")).To(BeEmpty())

			again := t.post("/accounts", body, "Idempotency-Key", "create-once")
			Expect(again).To(HaveStatus(http.StatusCreated), again.String())
			Expect(again.Header.Get("Idempotent-Replayed")).To(Equal("true"))
			Expect(again.Header.Get("Content-Type")).To(HavePrefix("application/json"))
			Expect(again.Body).To(MatchJSON(first.Body))
			Expect(again.Header.Get("X-Request-Id")).NotTo(BeEmpty())
			Expect(t.accountCount()).To(Equal(1))
		})

		It("replays for any key of the same project", func() {
			first := t.post("/accounts", map[string]any{"name": "Once"}, "Idempotency-Key", "shared")
			Expect(first).To(HaveStatus(http.StatusCreated))
			_, secret, err := st.CreateAPIKey(context.Background(), t.ProjectID, false)
			Expect(err).NotTo(HaveOccurred())
			again := t.withKey(secret).post("/accounts", map[string]any{"name": "Once"}, "Idempotency-Key", "shared")
			Expect(again.Header.Get("Idempotent-Replayed")).To(Equal("true"))
			Expect(again.Body).To(MatchJSON(first.Body))
			Expect(t.accountCount()).To(Equal(1))
		})

		It("replays a refusal the handler gave", func() {
			body := map[string]any{"name": "Nowhere", "time_zone": "Mars/Olympus_Mons"}
			first := t.post("/accounts", body, "Idempotency-Key", "bad-zone")
			Expect(first).To(HaveFieldError("time_zone"))
			again := t.post("/accounts", body, "Idempotency-Key", "bad-zone")
			Expect(again).To(HaveFieldError("time_zone"))
			Expect(again.Header.Get("Idempotent-Replayed")).To(Equal("true"))
		})

		It("refuses the same key with another body with 422 idempotency_key_reused", func() {
			Expect(t.post("/accounts", map[string]any{"name": "First"}, "Idempotency-Key", "k1")).To(HaveStatus(http.StatusCreated))
			Expect(t.post("/accounts", map[string]any{"name": "Second"}, "Idempotency-Key", "k1")).
				To(HaveError(http.StatusUnprocessableEntity, "idempotency_key_reused"))
			Expect(t.accountCount()).To(Equal(1))
		})

		It("refuses the same key and body on another path with 422 idempotency_key_reused", func() {
			a, b := t.createAccount("A"), t.createAccount("B")
			body := map[string]any{"first_name": "Ada"}
			Expect(t.post("/accounts/"+a+"/users", body, "Idempotency-Key", "k2")).To(HaveStatus(http.StatusCreated))
			Expect(t.post("/accounts/"+b+"/users", body, "Idempotency-Key", "k2")).
				To(HaveError(http.StatusUnprocessableEntity, "idempotency_key_reused"))
			Expect(t.get("/accounts/" + b + "/users").JSON()["data"]).To(BeEmpty())
		})

		It("refuses a key longer than 255 characters with 422 and accepts 255", func() {
			Expect(t.post("/accounts", map[string]any{"name": "Long"}, "Idempotency-Key", strings.Repeat("k", 256))).
				To(HaveFieldError("Idempotency-Key"))
			Expect(t.accountCount()).To(BeZero())
			Expect(t.post("/accounts", map[string]any{"name": "Long"}, "Idempotency-Key", strings.Repeat("k", 255))).
				To(HaveStatus(http.StatusCreated))
		})

		It("executes again once the key has expired", func() {
			short := newTenant()
			short.api = newAPI(server.Config{RateLimit: -1, IdempotencyTTL: time.Millisecond})
			body := map[string]any{"name": "Twice"}
			first := short.post("/accounts", body, "Idempotency-Key", "expiring")
			Expect(first).To(HaveStatus(http.StatusCreated))
			time.Sleep(10 * time.Millisecond)
			again := short.post("/accounts", body, "Idempotency-Key", "expiring")
			Expect(again).To(HaveStatus(http.StatusCreated))
			Expect(again.Header.Get("Idempotent-Replayed")).To(BeEmpty())
			Expect(again.JSON()["id"]).NotTo(Equal(first.JSON()["id"]))
			Expect(short.accountCount()).To(Equal(2))
		})

		It("keeps keys apart per project", func() {
			body := map[string]any{"name": "Same"}
			mine := t.post("/accounts", body, "Idempotency-Key", "per-project")
			other := newTenant()
			theirs := other.post("/accounts", body, "Idempotency-Key", "per-project")
			Expect(theirs).To(HaveStatus(http.StatusCreated), theirs.String())
			Expect(theirs.Header.Get("Idempotent-Replayed")).To(BeEmpty())
			Expect(theirs.JSON()["id"]).NotTo(Equal(mine.JSON()["id"]))
			Expect(other.accountCount()).To(Equal(1))
			Expect(t.accountCount()).To(Equal(1))
		})

		It("answers 409 idempotency_key_in_use while the first request is in flight", func() {
			_, _, err := st.ClaimIdempotencyKey(context.Background(), t.ProjectID, "in-flight", "another request", clock.Now(), time.Hour, time.Hour)
			Expect(err).NotTo(HaveOccurred())
			r := t.post("/accounts", map[string]any{"name": "Racing"}, "Idempotency-Key", "in-flight")
			Expect(r).To(HaveError(http.StatusConflict, "idempotency_key_in_use"))
			Expect(r.Header.Get("X-Should-Retry")).To(Equal("false"))
			Expect(t.accountCount()).To(BeZero())
		})

		It("does not remember requests the validator refused", func() {
			Expect(t.post("/accounts", map[string]any{"name": ""}, "Idempotency-Key", "fix-and-retry")).To(HaveFieldError("name"))
			Expect(t.post("/accounts", map[string]any{"name": "Fixed"}, "Idempotency-Key", "fix-and-retry")).To(HaveStatus(http.StatusCreated))
		})

		It("is ignored on methods other than POST", func() {
			id := t.createAccount("Acme")
			Expect(t.patch("/accounts/"+id, map[string]any{"name": "One"}, "Idempotency-Key", "patch")).To(HaveStatus(http.StatusOK))
			r := t.patch("/accounts/"+id, map[string]any{"name": "Two"}, "Idempotency-Key", "patch")
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.Header.Get("Idempotent-Replayed")).To(BeEmpty())
			Expect(r.JSON()).To(HaveKeyWithValue("name", "Two"))
		})
	})
})
