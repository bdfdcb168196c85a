package server_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Console projects and keys", func() {
	var (
		t     *tenant
		c     *consoleClient
		email string
	)
	BeforeEach(func() {
		t = newTenant()
		email = newConsoleUser(t.ProjectID, store.RoleOwner)
		c = signIn(email)
	})
	prj := func(path string) string { return "/projects/" + t.ProjectID + path }

	It("creates a project whose creator is its owner", func() {
		r := c.post("/projects", map[string]any{"name": "  Acme Health  "})
		Expect(r).To(HaveStatus(http.StatusCreated))
		p := r.JSON()
		Expect(p).To(SatisfyAll(HaveKeyWithValue("name", "Acme Health"), HaveKeyWithValue("role", "owner")))
		Expect(c.get("/me").JSON()["projects"]).To(ContainElement(HaveKeyWithValue("id", p["id"])))
		e := lastAudit(p["id"].(string))
		Expect(e.Action).To(Equal("project.create"))
		Expect(e.ActorEmail).To(Equal(email))
		Expect(c.post("/projects", map[string]any{"name": " "})).To(HaveFieldError("name"))
	})

	It("creates a key whose secret is shown once and works against the API, then revokes it", func() {
		r := c.post(prj("/keys"), nil)
		Expect(r).To(HaveStatus(http.StatusCreated))
		created := r.JSON()
		secret := created["secret"].(string)
		Expect(secret).To(MatchRegexp(`^sk_live_[A-Z2-7]{52}$`))
		Expect(created).To(SatisfyAll(HaveKeyWithValue("demo", false), HaveKeyWithValue("prefix", "sk_live_"),
			HaveKeyWithValue("hint", "sk_live_…"+secret[len(secret)-4:]), HaveKeyWithValue("last_used_at", BeNil())))

		list := c.get(prj("/keys"))
		Expect(list).To(HaveStatus(http.StatusOK))
		Expect(string(list.Body)).NotTo(ContainSubstring(secret), "the secret is never shown again")
		Expect(string(list.Body)).NotTo(ContainSubstring(`"secret"`))

		Expect(t.withKey(secret).get("/accounts")).To(HaveStatus(http.StatusOK))
		var keys struct {
			Data []map[string]any `json:"data"`
		}
		Eventually(func() any {
			api.FlushLogs()
			c.get(prj("/keys")).Into(&keys)
			for _, k := range keys.Data {
				if k["id"] == created["id"] {
					return k["last_used_at"]
				}
			}
			return nil
		}).ShouldNot(BeNil())

		Expect(c.post(prj("/keys/"+created["id"].(string)+"/revoke"), nil).JSON()).To(HaveKeyWithValue("revoked_at", Not(BeNil())))
		Expect(t.withKey(secret).get("/accounts")).To(HaveError(http.StatusUnauthorized, "invalid_api_key"))
		Expect(auditActions(t.ProjectID)[:2]).To(Equal([]string{"api_key.revoke", "api_key.create"}))
		e := lastAudit(t.ProjectID)
		Expect(e).To(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Target": Equal(created["id"]), "Via": Equal("console"), "IP": Equal(c.ip),
			"UserAgent": Equal("console-spec/1.0"), "ActorEmail": Equal(email)}))
		Expect(e.Detail).NotTo(ContainSubstring(secret))
	})

	It("marks demo keys", func() {
		r := c.post(prj("/keys"), map[string]any{"demo": true})
		Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("demo", true), HaveKeyWithValue("kind", "demo"),
			HaveKeyWithValue("secret", HavePrefix("sk_demo_"))))
	})

	It("does not revoke another project's key", func() {
		other := newTenant()
		Expect(c.post(prj("/keys/"+other.KeyID+"/revoke"), nil)).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(other.get("/accounts")).To(HaveStatus(http.StatusOK))
	})

	It("locks and unlocks the project: its keys get platform_locked meanwhile", func() {
		Expect(c.post(prj("/lock"), nil).JSON()).To(HaveKeyWithValue("locked", true))
		Expect(t.get("/accounts")).To(HaveError(http.StatusForbidden, "platform_locked"))
		Expect(c.get(prj("/api/accounts"))).To(HaveStatus(http.StatusOK), "the console still shows a locked project")
		Expect(c.post(prj("/unlock"), nil).JSON()).To(HaveKeyWithValue("locked", false))
		Expect(t.get("/accounts")).To(HaveStatus(http.StatusOK))
		Expect(auditActions(t.ProjectID)[:2]).To(Equal([]string{"project.unlock", "project.lock"}))
	})

	It("pages through the audit log", func() {
		for range 3 {
			Expect(c.post(prj("/keys"), nil)).To(HaveStatus(http.StatusCreated))
		}
		var page struct {
			Data       []map[string]any `json:"data"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		}
		c.get(prj("/audit?limit=2")).Into(&page)
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Data[0]).To(SatisfyAll(HaveKeyWithValue("action", "api_key.create"), HaveKeyWithValue("actor_email", email),
			HaveKeyWithValue("ip", c.ip), HaveKeyWithValue("via", "console"), HaveKeyWithValue("detail", HaveKeyWithValue("kind", "live"))))
		Expect(page.Pagination.NextCursor).NotTo(BeNil())
		c.get(prj("/audit?limit=2&after=" + *page.Pagination.NextCursor)).Into(&page)
		Expect(page.Data).To(HaveLen(1))
		Expect(c.get(prj("/audit?limit=500"))).To(HaveFieldError("limit"))
		Expect(c.get(prj("/audit?after=garbage"))).To(HaveFieldError("after"))
	})
})

var _ = Describe("Console API log", func() {
	var (
		t *tenant
		c *consoleClient
	)
	BeforeEach(func() {
		t = newTenant()
		c = signIn(newConsoleUser(t.ProjectID, store.RoleViewer))
	})
	type logs struct {
		Data       []map[string]any `json:"data"`
		Pagination struct {
			NextCursor     *string `json:"next_cursor"`
			PreviousCursor *string `json:"previous_cursor"`
		} `json:"pagination"`
	}
	list := func(query string) logs {
		var out logs
		r := c.get("/projects/" + t.ProjectID + "/logs?" + query)
		ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK))
		r.Into(&out)
		return out
	}
	paths := func(l logs) []string {
		out := []string{}
		for _, d := range l.Data {
			out = append(out, d["method"].(string)+" "+d["path"].(string))
		}
		return out
	}

	It("shows every authenticated request newest first, with filters, cursors and a request's detail", func() {
		acct := t.createAccount("Acme Dental")
		Expect(t.get("/accounts/acct_00000000000000000000000000")).To(HaveStatus(http.StatusNotFound))
		Expect(t.get("/accounts?limit=5", "User-Agent", "billing-sync/2.1")).To(HaveStatus(http.StatusOK))
		k, second, err := st.CreateAPIKey(context.Background(), t.ProjectID, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.withKey(second).get("/accounts/" + acct)).To(HaveStatus(http.StatusOK))
		Expect(newTenant().get("/accounts")).To(HaveStatus(http.StatusOK), "another project's request")

		all := list("")
		Expect(paths(all)).To(Equal([]string{"GET /accounts/" + acct, "GET /accounts", "GET /accounts/acct_00000000000000000000000000",
			"POST /accounts"}))
		Expect(paths(list("status=4xx"))).To(Equal([]string{"GET /accounts/acct_00000000000000000000000000"}))
		Expect(paths(list("status=201"))).To(Equal([]string{"POST /accounts"}))
		Expect(paths(list("key_id=" + k.ID))).To(Equal([]string{"GET /accounts/" + acct}))
		Expect(paths(list("path=acct_0000"))).To(Equal([]string{"GET /accounts/acct_00000000000000000000000000"}))
		Expect(paths(list("method=post"))).To(Equal([]string{"POST /accounts"}))
		future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
		Expect(list("from=" + future).Data).To(BeEmpty())
		Expect(list("to=" + future).Data).To(HaveLen(4))

		first := list("limit=2")
		Expect(paths(first)).To(Equal(paths(all)[:2]))
		Expect(first.Pagination.PreviousCursor).To(BeNil())
		next := list("limit=2&after=" + *first.Pagination.NextCursor)
		Expect(paths(next)).To(Equal(paths(all)[2:]))
		Expect(next.Pagination.NextCursor).To(BeNil())
		Expect(paths(list("limit=2&before=" + *next.Pagination.PreviousCursor))).To(Equal(paths(all)[:2]))

		listed := all.Data[1]
		detail := c.get("/projects/" + t.ProjectID + "/logs/" + listed["id"].(string))
		Expect(detail).To(HaveStatus(http.StatusOK))
		Expect(detail.JSON()).To(SatisfyAll(HaveKeyWithValue("query", "limit=5"), HaveKeyWithValue("user_agent", "billing-sync/2.1"),
			HaveKeyWithValue("status", BeNumerically("==", 200)), HaveKeyWithValue("key_id", t.KeyID),
			HaveKeyWithValue("request_id", HavePrefix("req_")), HaveKeyWithValue("duration_ms", BeNumerically(">", 0))))
		Expect(all.Data[2]).To(HaveKeyWithValue("error_type", "not_found"))
	})

	It("refuses filters it cannot read, and another project's request", func() {
		Expect(c.get("/projects/" + t.ProjectID + "/logs?status=teapot")).To(HaveFieldError("status"))
		Expect(c.get("/projects/" + t.ProjectID + "/logs?from=yesterday")).To(HaveFieldError("from"))
		Expect(c.get("/projects/" + t.ProjectID + "/logs?key_id=%00")).To(HaveStatus(http.StatusUnprocessableEntity))
		other := newTenant()
		Expect(other.get("/accounts")).To(HaveStatus(http.StatusOK))
		api.FlushLogs()
		l, _, err := st.ListAPILogPage(context.Background(), other.ProjectID, store.APILogFilter{}, store.Page{})
		Expect(err).NotTo(HaveOccurred())
		Expect(l).NotTo(BeEmpty())
		Expect(c.get("/projects/" + t.ProjectID + "/logs/" + jsonNumber(l[0].ID))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.get("/projects/" + t.ProjectID + "/logs/nope")).To(HaveError(http.StatusNotFound, "not_found"))
	})
})

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

var _ = Describe("Console webhooks", func() {
	var (
		t *tenant
		c *consoleClient
	)
	BeforeEach(func() {
		t = newTenant()
		c = signIn(newConsoleUser(t.ProjectID, store.RoleDeveloper))
	})
	prj := func(path string) string { return "/projects/" + t.ProjectID + path }
	deliveries := func(query string) []map[string]any {
		var out struct {
			Data []map[string]any `json:"data"`
		}
		c.get(prj("/deliveries?" + query)).Into(&out)
		return out.Data
	}

	It("adds an endpoint, sends it a signed test event, shows the delivery, and rotates the secret with an overlap", func() {
		rcv := newReceiver(nil)
		r := c.post(prj("/webhooks"), map[string]any{"url": rcv.URL(), "events": []string{"message.delivered", "message.failed"}})
		Expect(r).To(HaveStatus(http.StatusCreated))
		ep := r.JSON()
		secret := ep["secret"].(string)
		Expect(secret).To(HavePrefix("whsec_"))
		Expect(ep["events"]).To(Equal([]any{"message.delivered", "message.failed"}))
		listed := c.get(prj("/webhooks"))
		Expect(string(listed.Body)).NotTo(ContainSubstring(secret))
		Expect(listed.JSON()["event_types"]).To(HaveLen(len(webhooks.EventTypes)))

		id := ep["id"].(string)
		Expect(c.post(prj("/webhooks/"+id+"/test"), nil)).To(HaveStatus(http.StatusCreated))
		Eventually(rcv.all).Should(HaveLen(1))
		got := rcv.all()[0]
		expectSignedDelivery(got, secret)
		Expect(got.envelope()).To(SatisfyAll(HaveKeyWithValue("type", "message.delivered"),
			HaveKeyWithValue("account_id", "acct_00000000000000000000000000")))
		Expect(conformsTo(got.Body, "MessageDeliveredEvent")).To(Succeed())
		Eventually(func() []map[string]any { return deliveries("status=succeeded") }).Should(ConsistOf(
			SatisfyAll(HaveKeyWithValue("endpoint_id", id), HaveKeyWithValue("attempts", BeNumerically("==", 1)),
				HaveKeyWithValue("last_status", BeNumerically("==", 200)))))

		rotated := c.post(prj("/webhooks/"+id+"/rotate-secret"), nil).JSON()
		Expect(rotated["secret"]).To(SatisfyAll(HavePrefix("whsec_"), Not(Equal(secret))))
		Expect(rotated["previous_secret_valid_until"]).NotTo(BeNil())
		Expect(c.post(prj("/webhooks/"+id+"/test"), map[string]any{"event_type": "message.failed"})).To(HaveStatus(http.StatusCreated))
		Eventually(rcv.all).Should(HaveLen(2))
		expectSignedDelivery(rcv.all()[1], rotated["secret"].(string))
		expectSignedDelivery(rcv.all()[1], secret)
		Expect(c.get(prj("/webhooks/" + id + "/secret")).JSON()).To(HaveKeyWithValue("secret", rotated["secret"]))
		Expect(auditActions(t.ProjectID)).To(ContainElements("webhook.set", "webhook.test", "webhook.rotate_secret", "webhook.reveal_secret"))
	})

	DescribeTable("a test event of every type matches its schema",
		func(typ string) {
			rcv := newReceiver(nil)
			ep := t.subscribe(rcv.URL())
			Expect(c.post(prj("/webhooks/"+ep.ID+"/test"), map[string]any{"event_type": typ})).To(HaveStatus(http.StatusCreated))
			Eventually(rcv.all).Should(HaveLen(1))
			Expect(conformsTo(rcv.all()[0].Body, eventSchemas[typ])).To(Succeed())
		},
		func() []TableEntry {
			var es []TableEntry
			for _, typ := range webhooks.EventTypes {
				es = append(es, Entry(typ, typ))
			}
			return es
		}(),
	)

	It("shows a failed delivery's answer as text, its payload, and replays it once the receiver mends", func() {
		failing := true
		rcv := newReceiver(func(int) int {
			if failing {
				return http.StatusTeapot
			}
			return http.StatusOK
		})
		ep := t.subscribe(rcv.URL())
		Expect(c.post(prj("/webhooks/"+ep.ID+"/test"), nil)).To(HaveStatus(http.StatusCreated))
		Eventually(func() []map[string]any { return deliveries("") }).Should(ContainElement(
			HaveKeyWithValue("last_error", ContainSubstring("HTTP 418"))))
		d := deliveries("")[0]
		detail := c.get(prj("/deliveries/" + d["id"].(string))).JSON()
		Expect(detail).To(SatisfyAll(HaveKeyWithValue("endpoint_url", rcv.URL()), HaveKeyWithValue("payload", ContainSubstring(`"type":"message.received"`))))

		failing = false
		Expect(c.post(prj("/deliveries/"+d["id"].(string)+"/replay"), nil)).To(HaveStatus(http.StatusCreated))
		Eventually(func() []map[string]any { return deliveries("status=succeeded") }).Should(HaveLen(1))
		Expect(rcv.all()[len(rcv.all())-1].id()).To(Equal(d["event_id"]))
	})

	It("disables and enables an endpoint", func() {
		ep := t.subscribe(newReceiver(nil).URL())
		Expect(c.post(prj("/webhooks/"+ep.ID+"/disable"), nil).JSON()).To(SatisfyAll(HaveKeyWithValue("enabled", false),
			HaveKeyWithValue("disabled_reason", "disabled by the operator")))
		Expect(c.post(prj("/webhooks/"+ep.ID+"/test"), nil)).To(HaveError(http.StatusConflict, "conflict"))
		Expect(c.post(prj("/webhooks/"+ep.ID+"/enable"), nil).JSON()).To(HaveKeyWithValue("enabled", true))
	})

	It("refuses bad input and another project's endpoints and deliveries", func() {
		Expect(c.post(prj("/webhooks"), map[string]any{"url": "ftp://x"})).To(HaveFieldError("url"))
		Expect(c.post(prj("/webhooks"), map[string]any{"url": "https://x.example", "events": []string{"message.nope"}})).To(HaveFieldError("events"))
		Expect(c.post(prj("/webhooks/replay"), map[string]any{"since": "yesterday"})).To(HaveFieldError("since"))
		Expect(c.get(prj("/deliveries?status=lost"))).To(HaveFieldError("status"))
		other := newTenant()
		ep := other.subscribe(newReceiver(nil).URL())
		for _, action := range []string{"rotate-secret", "disable", "enable", "test"} {
			Expect(c.post(prj("/webhooks/"+ep.ID+"/"+action), nil)).To(HaveError(http.StatusNotFound, "not_found"), action)
		}
		Expect(c.get(prj("/webhooks/" + ep.ID + "/secret"))).To(HaveError(http.StatusNotFound, "not_found"))
		d, err := core.Operator.SendTestWebhook(context.Background(), service.CLIActor("spec"), other.ProjectID, ep.ID, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(c.get(prj("/deliveries/" + d.ID))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.post(prj("/deliveries/"+d.ID+"/replay"), nil)).To(HaveError(http.StatusNotFound, "not_found"))
	})
})

var _ = Describe("Console usage", func() {
	It("counts the segments, messages and MMS sent and received per account and day, as JSON and CSV", func() {
		t, acct, _, from := newSendingAccount()
		c := signIn(newConsoleUser(t.ProjectID, store.RoleViewer))
		handset := newHandset()
		long := strings.Repeat("Your appointment is tomorrow at 10:00. ", 5) // 195 GSM-7 characters: 2 segments
		ids := []string{
			t.send(acct, map[string]any{"to": handset, "from": from, "body": "Hello"})["id"].(string),
			t.send(acct, map[string]any{"to": handset, "from": from, "body": long})["id"].(string),
			t.send(acct, map[string]any{"to": handset, "from": from, "body": "Café ☕"})["id"].(string),
		}
		for _, id := range ids {
			t.awaitStatus(id, "delivered")
		}
		today := time.Now().UTC().Format(time.DateOnly)
		r := c.get("/projects/" + t.ProjectID + "/usage")
		Expect(r).To(HaveStatus(http.StatusOK))
		Expect(r.JSON()["data"]).To(ConsistOf(SatisfyAll(HaveKeyWithValue("date", today), HaveKeyWithValue("account_id", acct),
			HaveKeyWithValue("sms_outbound", BeNumerically("==", 3)), HaveKeyWithValue("segments_outbound", BeNumerically("==", 4)),
			HaveKeyWithValue("mms_outbound", BeNumerically("==", 0)), HaveKeyWithValue("sms_inbound", BeNumerically("==", 0)))))

		csvResp := c.get("/projects/" + t.ProjectID + "/usage?format=csv&account_id=" + acct)
		Expect(csvResp.Header.Get("Content-Type")).To(HavePrefix("text/csv"))
		Expect(csvResp.Header.Get("Content-Disposition")).To(ContainSubstring("attachment"))
		rows, err := csv.NewReader(strings.NewReader(string(csvResp.Body))).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(Equal([][]string{service.UsageCSVHeader, {today, acct, "3", "4", "0", "0", "0", "0", "0", "0"}}))

		public := t.get("/usage")
		Expect(public).To(HaveStatus(http.StatusOK))
		Expect(public.JSON()["data"]).To(Equal(r.JSON()["data"]), "the API for billing systems reports the same figures")
		Expect(t.get("/usage?account_id=" + acct + "&from=" + today + "&to=" + today).JSON()["data"]).To(HaveLen(1))
		Expect(t.get("/usage?from=tuesday")).To(HaveFieldError("from"))
		Expect(t.get("/usage?from=2020-01-01&to=2024-01-01")).To(HaveFieldError("from"))

		yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		Expect(c.get("/projects/" + t.ProjectID + "/usage?to=" + yesterday).JSON()["data"]).To(BeEmpty())
		Expect(c.get("/projects/" + t.ProjectID + "/usage?from=" + today + "&to=" + yesterday)).To(HaveFieldError("from"))
		Expect(c.get("/projects/" + t.ProjectID + "/usage?from=2020-01-01&to=2024-01-01")).To(HaveFieldError("from"))
		Expect(c.get("/projects/" + t.ProjectID + "/usage?from=tuesday")).To(HaveFieldError("from"))
		Expect(c.get("/projects/" + t.ProjectID + "/usage?account_id=" + newTenant().createAccount("Other"))).To(HaveError(http.StatusNotFound, "not_found"))
	})
})

var _ = Describe("Console bridge to the public API", func() {
	var (
		t *tenant
		c *consoleClient
	)
	BeforeEach(func() {
		t = newTenant()
		c = signIn(newConsoleUser(t.ProjectID, store.RoleDeveloper))
	})
	prj := func(path string) string { return "/projects/" + t.ProjectID + path }

	It("serves the project's resources as the API does, and audits each change as its operation", func() {
		r := c.post(prj("/api/accounts"), map[string]any{"name": "Acme Dental"})
		Expect(r).To(HaveStatus(http.StatusCreated))
		acct := r.JSON()["id"].(string)
		Expect(t.get("/accounts/" + acct).JSON()).To(HaveKeyWithValue("name", "Acme Dental"))
		e := lastAudit(t.ProjectID)
		Expect(e.Action).To(Equal("api.createAccount"))
		Expect(e.Target).To(Equal("/accounts"))
		Expect(c.get(prj("/api/accounts/" + acct)).Header.Get("Content-Security-Policy")).To(ContainSubstring("frame-ancestors 'none'"))
		list := c.get(prj("/api/accounts?limit=1"))
		Expect(list).To(HaveStatus(http.StatusOK))
		Expect(list.JSON()["data"]).To(HaveLen(1))

		Expect(c.post(prj("/api/accounts"), map[string]any{"nam": "typo"})).To(HaveFieldError("nam"))
		Expect(c.get(prj("/api/nothing-here"))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.get(prj("/api/console/api/me"))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.get(prj("/api/accounts/" + newTenant().createAccount("Theirs")))).To(HaveError(http.StatusNotFound, "not_found"))
		api.FlushLogs()
		logs, _, err := st.ListAPILogPage(context.Background(), t.ProjectID, store.APILogFilter{}, store.Page{Limit: 100})
		Expect(err).NotTo(HaveOccurred())
		for _, l := range logs {
			Expect(l.KeyID).To(Equal(t.KeyID), "console calls are not API-key requests")
		}
	})

	It("decides a toll-free verification under the simulated carrier's review", func() {
		f := &roleFixture{t: t, account: t.createAccount("Acme Dental")}
		tfc := f.reviewed()
		r := c.post(prj("/sim/verdicts"), map[string]any{"id": tfc, "verdict": "reject", "reason": "sample lacks opt-out language"})
		Expect(r.JSON()).To(Equal(map[string]any{"id": tfc, "status": "rejected", "previous_status": "in_review", "changed": true}))
		got := c.get(prj("/api/toll_free_campaigns/" + tfc)).JSON()
		Expect(got).To(HaveKeyWithValue("status", "rejected"))
		review := c.get(prj("/accounts/" + f.account + "/review")).JSON()
		Expect(review).To(HaveKeyWithValue("archived_at", BeNil()))
		Expect(review["campaigns"]).To(ContainElement(SatisfyAll(HaveKeyWithValue("id", tfc), HaveKeyWithValue("kind", "toll_free"),
			HaveKeyWithValue("rejection_reason", "sample lacks opt-out language"), HaveKeyWithValue("phone_number", HavePrefix("+1")))))
		Expect(c.post(prj("/sim/verdicts"), map[string]any{"id": tfc, "verdict": "approve"}).JSON()).To(HaveKeyWithValue("changed", false))
		approved := f.reviewed()
		Expect(c.post(prj("/sim/verdicts"), map[string]any{"id": approved, "verdict": "approve"}).JSON()).To(HaveKeyWithValue("status", "active"))
		Expect(auditActions(t.ProjectID)).To(ContainElements("sim.reject", "sim.approve"))

		other := &roleFixture{t: newTenant()}
		other.account = other.t.createAccount("Theirs")
		Expect(c.post(prj("/sim/verdicts"), map[string]any{"id": other.reviewed(), "verdict": "approve"})).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.get(prj("/accounts/" + other.account + "/review"))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(c.post(prj("/sim/verdicts"), map[string]any{"id": "cpn_x", "verdict": "maybe"})).To(HaveFieldError("verdict"))
		Expect(c.post(prj("/sim/verdicts"), map[string]any{"id": "acct_x", "verdict": "approve"})).To(HaveFieldError("id"))
	})
})

var _ = Describe("Console pages", func() {
	It("serves the console's page at every path under /console/, never framed, with a strict CSP", func() {
		c := newConsoleClient()
		for _, path := range []string{"/console/", "/console/p/prj_x/keys", "/console/settings"} {
			req := httptest.NewRequest(http.MethodGet, "https://switchboard.test"+path, nil)
			rec := httptest.NewRecorder()
			c.api.ServeHTTP(rec, req)
			Expect(rec.Code).To(Equal(http.StatusOK), path)
			Expect(rec.Header().Get("Content-Type")).To(HavePrefix("text/html"))
			Expect(rec.Body.String()).To(ContainSubstring(`<div id="app"></div>`))
			csp := rec.Header().Get("Content-Security-Policy")
			Expect(csp).To(SatisfyAll(ContainSubstring("frame-ancestors 'none'"), ContainSubstring("script-src 'self'"),
				Not(ContainSubstring("unsafe-inline")), Not(ContainSubstring("unsafe-eval"))))
			Expect(rec.Header().Get("X-Frame-Options")).To(Equal("DENY"))
		}
		req := httptest.NewRequest(http.MethodGet, "https://switchboard.test/console", nil)
		rec := httptest.NewRecorder()
		c.api.ServeHTTP(rec, req)
		Expect(rec.Code).To(Equal(http.StatusFound))
		Expect(rec.Header().Get("Location")).To(Equal("/console/"))
		Expect(c.get("/nothing")).To(HaveError(http.StatusNotFound, "not_found"), "the API's unknown routes are errors, not the page")
	})
})
