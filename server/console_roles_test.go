package server_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// roleFixture is a project with something of everything a console action may act on.
type roleFixture struct {
	t        *tenant
	account  string
	endpoint *store.WebhookEndpoint
	member   string
}

func (f *roleFixture) prj(path string) string { return "/projects/" + f.t.ProjectID + path }

// freshKey mints a key for an action that revokes one.
func (f *roleFixture) freshKey() string {
	k, _, err := st.CreateAPIKey(context.Background(), f.t.ProjectID, false)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return k.ID
}

// reviewed stores a toll-free verification under the simulated carrier's review.
func (f *roleFixture) reviewed() string {
	numberID, _ := f.t.addNumber(f.account, numberSetup{Type: store.NumberTollFree})
	tfc := &store.TollFreeCampaign{ProjectID: f.t.ProjectID, AccountID: f.account, PhoneNumberID: numberID, Carrier: "sim",
		Status: store.CampaignInReview, Params: store.TollFreeParams{UseCases: []string{"account_notification"},
			Description: "Appointment reminders", MessageSamples: []string{"Your appointment is tomorrow at 10:00."},
			Includes: []string{}, PrivacyPolicyURL: "https://example.com/privacy", TermsAndConditionsURL: "https://example.com/terms"}}
	ExpectWithOffset(1, st.CreateTollFreeCampaign(context.Background(), tfc)).To(Succeed())
	return tfc.ID
}

// consoleAction is one thing an operator may try.
type consoleAction func(c *consoleClient, f *roleFixture) *response

var _ = Describe("Console roles", func() {
	var (
		f     *roleFixture
		users map[string]*consoleClient
	)
	BeforeEach(func() {
		t := newTenant()
		f = &roleFixture{t: t, account: t.createAccount("Acme Dental")}
		f.endpoint = t.subscribe(newReceiver(nil).URL())
		users = map[string]*consoleClient{}
		for _, role := range []string{store.RoleOwner, store.RoleDeveloper, store.RoleViewer} {
			users[role] = signIn(newConsoleUser(t.ProjectID, role))
		}
		other := newTenant()
		users["outsider"] = signIn(newConsoleUser(other.ProjectID, store.RoleOwner))
	})

	// Each role may do what its rank allows and is refused the rest with 403 forbidden, changing
	// nothing (no audit entry); a user of another project is told the project does not exist.
	DescribeTable("each role's allowed and refused actions",
		func(need string, success int, act consoleAction) {
			rank := map[string]int{store.RoleViewer: 1, store.RoleDeveloper: 2, store.RoleOwner: 3}
			for _, role := range []string{store.RoleViewer, store.RoleDeveloper, store.RoleOwner, "outsider"} {
				f.member = userID(newConsoleUser(f.t.ProjectID, store.RoleViewer))
				before := len(auditActions(f.t.ProjectID))
				r := act(users[role], f)
				switch {
				case role == "outsider":
					Expect(r).To(HaveError(http.StatusNotFound, "not_found"), role)
				case rank[role] >= rank[need]:
					Expect(r).To(HaveStatus(success), "%s: %s", role, r)
				default:
					Expect(r).To(HaveError(http.StatusForbidden, "forbidden"), role)
					Expect(auditActions(f.t.ProjectID)).To(HaveLen(before), "a refused %s changes nothing", role)
				}
			}
		},
		Entry("list keys", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/keys"))
		}),
		Entry("create a key", store.RoleDeveloper, http.StatusCreated, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/keys"), map[string]any{"demo": true})
		}),
		Entry("revoke a key", store.RoleDeveloper, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/keys/"+f.freshKey()+"/revoke"), nil)
		}),
		Entry("list webhook endpoints", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/webhooks"))
		}),
		Entry("add a webhook endpoint", store.RoleDeveloper, http.StatusCreated, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/webhooks"), map[string]any{"url": "https://hooks.example.com/" + store.NewID("x"), "events": []string{"message.received"}})
		}),
		Entry("reveal a signing secret", store.RoleDeveloper, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/webhooks/" + f.endpoint.ID + "/secret"))
		}),
		Entry("rotate a signing secret", store.RoleDeveloper, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/webhooks/"+f.endpoint.ID+"/rotate-secret"), nil)
		}),
		Entry("disable an endpoint", store.RoleDeveloper, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/webhooks/"+f.endpoint.ID+"/disable"), nil)
		}),
		Entry("send a test event", store.RoleDeveloper, http.StatusCreated, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/webhooks/"+f.endpoint.ID+"/test"), nil)
		}),
		Entry("replay failed deliveries", store.RoleDeveloper, http.StatusCreated, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/webhooks/replay"), map[string]any{"since": time.Now().Add(-time.Hour).Format(time.RFC3339)})
		}),
		Entry("read the delivery log", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/deliveries"))
		}),
		Entry("read the API log", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/logs"))
		}),
		Entry("read the audit log", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/audit"))
		}),
		Entry("read usage", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/usage"))
		}),
		Entry("list members", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/members"))
		}),
		Entry("add a member", store.RoleOwner, http.StatusCreated, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/members"), map[string]any{"email": store.NewID("new") + "@example.com", "role": "viewer"})
		}),
		Entry("change a member's role", store.RoleOwner, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.do(http.MethodPatch, f.prj("/members/"+f.member), map[string]any{"role": "developer"})
		}),
		Entry("remove a member", store.RoleOwner, http.StatusNoContent, func(c *consoleClient, f *roleFixture) *response {
			return c.do(http.MethodDelete, f.prj("/members/"+f.member), nil)
		}),
		Entry("lock the project", store.RoleOwner, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/lock"), nil)
		}),
		Entry("decide a simulated review", store.RoleDeveloper, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/sim/verdicts"), map[string]any{"id": f.reviewed(), "verdict": "approve"})
		}),
		Entry("review an account's campaigns", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/accounts/" + f.account + "/review"))
		}),
		Entry("read accounts through the public API", store.RoleViewer, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.get(f.prj("/api/accounts"))
		}),
		Entry("create an account through the public API", store.RoleDeveloper, http.StatusCreated, func(c *consoleClient, f *roleFixture) *response {
			return c.post(f.prj("/api/accounts"), map[string]any{"name": "Bright Smiles"})
		}),
		Entry("archive an account through the public API", store.RoleDeveloper, http.StatusOK, func(c *consoleClient, f *roleFixture) *response {
			return c.do(http.MethodDelete, f.prj("/api/accounts/"+f.t.createAccount("Short-lived")), nil)
		}),
	)

	It("keeps a project's last owner", func() {
		owner := users[store.RoleOwner]
		me := owner.me["user"].(map[string]any)["id"].(string)
		r := owner.do(http.MethodPatch, f.prj("/members/"+me), map[string]any{"role": "viewer"})
		Expect(r).To(HaveError(http.StatusConflict, "conflict"))
		Expect(owner.do(http.MethodDelete, f.prj("/members/"+me), nil)).To(HaveError(http.StatusConflict, "conflict"))
		dev := userID(newConsoleUser(f.t.ProjectID, store.RoleDeveloper))
		Expect(owner.do(http.MethodPatch, f.prj("/members/"+dev), map[string]any{"role": "owner"})).To(HaveStatus(http.StatusOK))
		Expect(owner.do(http.MethodDelete, f.prj("/members/"+me), nil)).To(HaveStatus(http.StatusNoContent))
		Expect(owner.get(f.prj("/keys"))).To(HaveError(http.StatusNotFound, "not_found"), "no longer a member")
	})

	It("lets only an owner of some project create projects", func() {
		for _, role := range []string{store.RoleViewer, store.RoleDeveloper} {
			Expect(users[role].post("/projects", map[string]any{"name": "Side project"})).To(HaveError(http.StatusForbidden, "forbidden"), role)
		}
		Expect(users[store.RoleOwner].post("/projects", map[string]any{"name": "Side project"})).To(HaveStatus(http.StatusCreated))
	})

	It("validates roles and emails of new members", func() {
		owner := users[store.RoleOwner]
		Expect(owner.post(f.prj("/members"), map[string]any{"email": "x@example.com", "role": "admin"})).To(HaveFieldError("role"))
		Expect(owner.post(f.prj("/members"), map[string]any{"email": "not an email", "role": "viewer"})).To(HaveFieldError("email"))
	})

	It("gives an existing user a role without a new password", func() {
		email := newConsoleUser("", "")
		r := users[store.RoleOwner].post(f.prj("/members"), map[string]any{"email": email, "role": "developer"})
		Expect(r).To(HaveStatus(http.StatusCreated))
		Expect(r.JSON()).To(HaveKeyWithValue("one_time_password", BeNil()))
		Expect(signIn(email).get(f.prj("/keys"))).To(HaveStatus(http.StatusOK))
	})
})

// userID is the console user id of an email.
func userID(email string) string {
	u, err := st.ConsoleUserByEmail(context.Background(), email)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return u.ID
}
