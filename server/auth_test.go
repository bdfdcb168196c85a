package server_test

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// authRoute is an operation called with a key: method, path (where {account} is replaced by an
// account id of the caller's project) and body.
type authRoute struct {
	method, path string
	body         any
}

func (t *tenant) call(r authRoute, account string) *response {
	return t.request(r.method, strings.ReplaceAll(r.path, "{account}", account), r.body)
}

// keyedRoutes are operations that need a live API key, one per implemented resource and method.
var keyedRoutes = []TableEntry{
	Entry("GET /accounts", authRoute{http.MethodGet, "/accounts", nil}),
	Entry("POST /accounts", authRoute{http.MethodPost, "/accounts", map[string]any{"name": "Acme"}}),
	Entry("GET /accounts/{id}", authRoute{http.MethodGet, "/accounts/{account}", nil}),
	Entry("PATCH /accounts/{id}", authRoute{http.MethodPatch, "/accounts/{account}", map[string]any{"name": "Renamed"}}),
	Entry("DELETE /accounts/{id}", authRoute{http.MethodDelete, "/accounts/{account}", nil}),
	Entry("GET /accounts/{id}/status", authRoute{http.MethodGet, "/accounts/{account}/status", nil}),
	Entry("GET /accounts/{id}/users", authRoute{http.MethodGet, "/accounts/{account}/users", nil}),
	Entry("POST /accounts/{id}/users", authRoute{http.MethodPost, "/accounts/{account}/users", map[string]any{"first_name": "Ada"}}),
	Entry("GET /accounts/{id}/contacts", authRoute{http.MethodGet, "/accounts/{account}/contacts", nil}),
	Entry("POST /accounts/{id}/contacts", authRoute{http.MethodPost, "/accounts/{account}/contacts", map[string]any{"phone_number": "+14155550123"}}),
	Entry("GET /accounts/{id}/messages", authRoute{http.MethodGet, "/accounts/{account}/messages", nil}),
	Entry("GET /users/{id}", authRoute{http.MethodGet, "/users/" + store.NewID("usr"), nil}),
	Entry("GET /contacts/{id}", authRoute{http.MethodGet, "/contacts/" + store.NewID("ctc"), nil}),
	Entry("GET /messages/{id}", authRoute{http.MethodGet, "/messages/" + store.NewID("msg"), nil}),
	Entry("GET /recordings/{id}", authRoute{http.MethodGet, "/recordings/" + store.NewID("rec"), nil}),
}

var _ = Describe("Authentication", func() {
	var (
		t       *tenant
		account string
	)
	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("Acme")
	})

	DescribeTable("answers 401 missing_api_key without an Authorization header",
		func(r authRoute) {
			Expect(t.withKey("").call(r, account)).To(HaveError(http.StatusUnauthorized, "missing_api_key"))
		},
		keyedRoutes,
	)

	It("checks the key before validating the request", func() {
		Expect(t.withKey("").post("/accounts", map[string]any{"nickname": 1})).To(HaveError(http.StatusUnauthorized, "missing_api_key"))
		Expect(t.withKey("sk_live_nope").post("/accounts", `{"name":`)).To(HaveError(http.StatusUnauthorized, "invalid_api_key"))
	})

	DescribeTable("answers 401 invalid_api_key for a header that carries no valid key",
		func(header func(t *tenant) string) {
			r := t.withKey("").get("/accounts", "Authorization", header(t))
			Expect(r).To(HaveError(http.StatusUnauthorized, "invalid_api_key"))
		},
		Entry("garbage", func(*tenant) string { return "garbage" }),
		Entry("the scheme alone", func(*tenant) string { return "Bearer" }),
		Entry("the scheme and a blank", func(*tenant) string { return "Bearer    " }),
		Entry("Basic credentials", func(*tenant) string { return "Basic dXNlcjpwYXNz" }),
		Entry("a valid key with the wrong scheme", func(t *tenant) string { return "Token " + t.Key }),
		Entry("a valid key without a scheme", func(t *tenant) string { return t.Key }),
		Entry("a key without a known prefix", func(*tenant) string { return "Bearer pk_live_0123456789abcdefghijklmnopqrstuvwxyz" }),
		Entry("an unknown live key", func(*tenant) string { return "Bearer sk_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST" }),
		Entry("an unknown demo key", func(*tenant) string { return "Bearer sk_demo_ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST" }),
		Entry("a valid key with a character changed", func(t *tenant) string {
			k := []byte(t.Key)
			if k[len(k)-1] == 'A' {
				k[len(k)-1] = 'B'
			} else {
				k[len(k)-1] = 'A'
			}
			return "Bearer " + string(k)
		}),
		Entry("a valid key with a suffix", func(t *tenant) string { return "Bearer " + t.Key + "x" }),
	)

	It("accepts the Bearer scheme in any letter case", func() {
		Expect(t.withKey("").get("/accounts", "Authorization", "bearer "+t.Key)).To(HaveStatus(http.StatusOK))
		Expect(t.withKey("").get("/accounts", "Authorization", "BEARER "+t.Key)).To(HaveStatus(http.StatusOK))
	})

	It("refuses a revoked key with 401 invalid_api_key at once", func() {
		ctx := context.Background()
		k, secret, err := st.CreateAPIKey(ctx, t.ProjectID, false)
		Expect(err).NotTo(HaveOccurred())
		second := t.withKey(secret)
		Expect(second.get("/accounts/" + account)).To(HaveStatus(http.StatusOK))

		_, err = st.RevokeAPIKey(ctx, k.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(second.get("/accounts/" + account)).To(HaveError(http.StatusUnauthorized, "invalid_api_key"))
		Expect(second.post("/accounts", map[string]any{"name": "After revocation"})).To(HaveError(http.StatusUnauthorized, "invalid_api_key"))

		By("leaving the project's other keys working")
		Expect(t.get("/accounts/" + account)).To(HaveStatus(http.StatusOK))
		Expect(t.get("/accounts").JSON()["data"]).To(HaveLen(1))
	})

	It("refuses every key of a locked project with 403 platform_locked until it is unlocked", func() {
		ctx := context.Background()
		_, demo, err := st.CreateAPIKey(ctx, t.ProjectID, true)
		Expect(err).NotTo(HaveOccurred())
		_, err = st.SetProjectLocked(ctx, t.ProjectID, true)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _, _ = st.SetProjectLocked(context.Background(), t.ProjectID, false) })

		Expect(t.get("/accounts/" + account)).To(HaveError(http.StatusForbidden, "platform_locked"))
		Expect(t.post("/accounts", map[string]any{"name": "While locked"})).To(HaveError(http.StatusForbidden, "platform_locked"))
		Expect(t.withKey(demo).post("/accounts/"+account+"/messages", map[string]any{"to": "+14155550123", "body": "hi"})).
			To(HaveError(http.StatusForbidden, "platform_locked"))
		By("leaving other projects alone")
		Expect(newTenant().get("/accounts")).To(HaveStatus(http.StatusOK))

		_, err = st.SetProjectLocked(ctx, t.ProjectID, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.get("/accounts/" + account)).To(HaveStatus(http.StatusOK))
		Expect(t.get("/accounts").JSON()["data"]).To(HaveLen(1), "nothing was created while locked")
	})

	Describe("with a demo key", func() {
		var demo *tenant
		BeforeEach(func() {
			_, secret, err := st.CreateAPIKey(context.Background(), t.ProjectID, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(secret).To(HavePrefix("sk_demo_"))
			demo = t.withKey(secret)
		})

		DescribeTable("refuses everything but sends with 403 demo_api_key",
			func(r authRoute) {
				Expect(demo.call(r, account)).To(HaveError(http.StatusForbidden, "demo_api_key"))
			},
			keyedRoutes,
		)

		It("changes nothing when refused", func() {
			demo.post("/accounts", map[string]any{"name": "Demo"})
			demo.delete("/accounts/" + account)
			Expect(t.get("/accounts").JSON()["data"]).To(HaveExactElements(HaveKeyWithValue("name", "Acme")))
			Expect(localMessaging(t.get("/accounts/" + account + "/status"))["errors"]).
				NotTo(ContainElement(HaveKeyWithValue("type", "account_archived")), "the account is not archived")
		})

		It("is not refused on POST /accounts/{account_id}/messages", func() {
			r := demo.post("/accounts/"+account+"/messages", map[string]any{"to": "+14155550123", "body": "Hello from the demo"})
			Expect(r.Status).NotTo(Equal(http.StatusUnauthorized), r.String())
			Expect(r.Status).NotTo(Equal(http.StatusForbidden), r.String())
		})
	})

	DescribeTable("serves public routes without a key",
		func(path string) {
			r := t.withKey("").get(path)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
		},
		Entry("/healthz", "/healthz"),
		Entry("/readyz", "/readyz"),
		Entry("/.well-known/jwks.json", "/.well-known/jwks.json"),
	)
})
