package smpp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/carriers/smpp/smsctest"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/server/contracttest"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// End to end: the messaging core and the real API stack with the SMPP adapter as the only
// messaging carrier, against the fake SMSC, on a database of their own (so that no other suite's
// job workers take these messages).
var _ = Describe("Messaging through the API with the SMPP adapter", Ordered, func() {
	var (
		api    *server.Server
		db     *store.Store
		key    string
		acct   string
		number string
		fake   *smsctest.SMSC
	)

	// call sends a request through the whole Echo stack in-process and decodes the JSON answer.
	call := func(method, path string, body any) (int, map[string]any) {
		var rd *bytes.Reader
		if body != nil {
			b, err := json.Marshal(body)
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req := httptest.NewRequest(method, "https://switchboard.test"+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	status := func(id string) func() string {
		return func() string {
			_, m := call(http.MethodGet, "/messages/"+id, nil)
			st, _ := m["status"].(string)
			return st
		}
	}
	send := func(to, body string) map[string]any {
		code, m := call(http.MethodPost, "/accounts/"+acct+"/messages", map[string]any{"to": to, "from": number, "body": body})
		ExpectWithOffset(1, code).To(Equal(http.StatusCreated), "%v", m)
		return m
	}
	inbound := func(from string) []map[string]any {
		_, list := call(http.MethodGet, "/accounts/"+acct+"/messages?limit=100", nil)
		var out []map[string]any
		for _, m := range list["data"].([]any) {
			mm := m.(map[string]any)
			conv, _ := mm["conversation"].(map[string]any)
			contact, _ := conv["contact"].(map[string]any)
			if mm["direction"] == "inbound" && contact["phone_number"] == from {
				out = append(out, mm)
			}
		}
		return out
	}

	BeforeAll(func(ctx context.Context) {
		var cleanup func()
		var err error
		db, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		fake = startSMSC(smsctest.Config{})
		var adapter *smpp.Carrier
		core, err := service.NewCore(service.CoreConfig{
			Store: db, PublicURL: "https://switchboard.test", Logger: testLogger(),
			Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
				adapter, err = smpp.New(smpp.Config{Addr: fake.Addr(), SystemID: "test", Password: "secret", Store: db.SMPP(), Reporter: r,
					ReconnectMin: 20 * time.Millisecond, Logger: testLogger()})
				return []carriers.Carrier{adapter}, err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		adapter.Start()
		DeferCleanup(adapter.Close) // after the workers stop (cleanups run last in, first out)
		workers, err := core.StartWorkers(context.WithoutCancel(ctx))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(workers.Stop(ctx)).To(Succeed()) })
		api, err = server.New(server.Config{Core: core, RateLimit: -1, Logger: testLogger(),
			Middleware: []echo.MiddlewareFunc{contracttest.MustNew().FailSpecs()}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(api.Close)

		p, err := db.CreateProject(ctx, "smpp end to end")
		Expect(err).NotTo(HaveOccurred())
		_, key, err = db.CreateAPIKey(ctx, p.ID, false)
		Expect(err).NotTo(HaveOccurred())
		code, a := call(http.MethodPost, "/accounts", map[string]any{"name": "Acme Dental"})
		Expect(code).To(Equal(http.StatusCreated))
		acct = a["id"].(string)
		// The operator lists the route's numbers (`switchboard smpp numbers add`); everything
		// else goes through the API: the account takes one, imports the campaign its operator
		// registered, and attaches the number to it.
		var pool []smpp.PoolNumber
		for _, n := range []string{"+14155550142", "+14155550143", "+18335550142"} {
			p, err := smpp.PoolNumberOf(n, time.Now())
			Expect(err).NotTo(HaveOccurred())
			pool = append(pool, p)
		}
		Expect(db.SMPP().AddPoolNumbers(ctx, pool)).To(Succeed())
		code, bought := call(http.MethodPost, "/accounts/"+acct+"/phone_numbers", map[string]any{"phone_number": "+14155550142"})
		Expect(code).To(Equal(http.StatusCreated), "%v", bought)
		number = bought["number"].(string)
		code, c := call(http.MethodPost, "/accounts/"+acct+"/campaigns", map[string]any{"tcr_id": "CSMPP01"})
		Expect(code).To(Equal(http.StatusCreated), "%v", c)
		Eventually(func() any { _, got := call(http.MethodGet, "/campaigns/"+c["id"].(string), nil); return got["status"] }).Should(Equal("active"))
		code, attached := call(http.MethodPatch, "/phone_numbers/"+bought["id"].(string), map[string]any{"campaign_id": c["id"]})
		Expect(code).To(Equal(http.StatusOK), "%v", attached)
		Expect(attached["campaign"]).To(HaveKeyWithValue("attachment_status", "attached"))
	})

	It("offers the route's free numbers, takes and gives them back through the API", func() {
		code, found := call(http.MethodGet, "/accounts/"+acct+"/available_phone_numbers?type=local&area_code=415", nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(found["data"]).To(ConsistOf(HaveKeyWithValue("number", "+14155550143")), "the held number is not offered")
		code, bought := call(http.MethodPost, "/accounts/"+acct+"/phone_numbers", map[string]any{"type": "toll_free"})
		Expect(code).To(Equal(http.StatusCreated), "%v", bought)
		Expect(bought).To(HaveKeyWithValue("number", "+18335550142"))
		code, tf := call(http.MethodPost, "/accounts/"+acct+"/toll_free_campaigns", map[string]any{"phone_number_id": bought["id"],
			"use_cases": []string{"account_notification"}, "description": "Shipping notices for customers who asked for them.",
			"message_samples": []string{"Your order has shipped. Reply STOP to opt out."}, "includes": []string{},
			"privacy_policy_url": "https://acme.example/privacy", "terms_and_conditions_url": "https://acme.example/terms"})
		Expect(code).To(Equal(http.StatusCreated), "%v", tf)
		Eventually(func() any {
			_, got := call(http.MethodGet, "/toll_free_campaigns/"+tf["id"].(string), nil)
			return got["status"]
		}).
			Should(Equal("active"), "the route's toll-free numbers are the operator's, verified with the SMSC's operator")
		code, _ = call(http.MethodDelete, "/phone_numbers/"+bought["id"].(string), nil)
		Expect(code).To(Equal(http.StatusOK))
		Eventually(func() []any {
			_, found := call(http.MethodGet, "/accounts/"+acct+"/available_phone_numbers?type=toll_free", nil)
			return found["data"].([]any)
		}).Should(ConsistOf(HaveKeyWithValue("number", "+18335550142")), "a released number goes back to the route's inventory")
	})

	It("delivers a message sent through the API, by the SMSC's receipt", func() {
		to := newHandset()
		m := send(to, "Your car is ready for pickup.")
		Eventually(status(m["id"].(string))).Should(Equal("delivered"))
		Expect(partsTo(fake, to)).To(ConsistOf(HaveField("Text", "Your car is ready for pickup.")))
	})

	It("delivers a long UCS-2 message only once every part's receipt is in", func() {
		to := newHandset()
		withOutcome(to, outcome{3: {"", ""}})
		body := strings.Repeat("Ваш автомобиль готов. ", 9)
		m := send(to, body)
		Expect(m).To(SatisfyAll(HaveKeyWithValue("encoding", "ucs2"), HaveKeyWithValue("segments", BeNumerically("==", 3))))
		id := m["id"].(string)
		Eventually(status(id)).Should(Equal("sent"))
		Consistently(status(id), "500ms").Should(Equal("sent"))
		parts := partsTo(fake, to)
		Expect(parts).To(HaveLen(3))
		Expect(parts).To(HaveEach(HaveField("DataCoding", byte(0x08))))
		fake.SendReceipt(parts[2], "DELIVRD", "000")
		Eventually(status(id)).Should(Equal("delivered"))
	})

	It("fails a message whose part the network rejects, with the mapped reason", func() {
		to := newHandset()
		withOutcome(to, outcome{0: {"REJECTD", "000"}})
		m := send(to, "Your car is ready.")
		Eventually(status(m["id"].(string))).Should(Equal("failed"))
		_, got := call(http.MethodGet, "/messages/"+m["id"].(string), nil)
		Expect(got).To(HaveKeyWithValue("failure_reason", carriers.FailureCarrierFiltered))
	})

	It("stores a handset's message, sent as an MO deliver_sm, as received", func() {
		from := newHandset()
		Expect(fake.SendMO(from, number, "Is my car ready?")).To(Succeed())
		Eventually(func() []map[string]any { return inbound(from) }).Should(ConsistOf(SatisfyAll(
			HaveKeyWithValue("status", "received"), HaveKeyWithValue("body", "Is my car ready?"))))
	})

	It("opts a handset out on STOP and confirms it over SMPP", func() {
		from := newHandset()
		Expect(fake.SendMO(from, number, "STOP")).To(Succeed())
		Eventually(func() []any {
			_, list := call(http.MethodGet, "/accounts/"+acct+"/contacts", nil)
			return list["data"].([]any)
		}).Should(ContainElement(SatisfyAll(HaveKeyWithValue("phone_number", from), HaveKeyWithValue("opted_out", true))))
		Eventually(func() []string {
			var out []string
			for _, p := range partsTo(fake, from) {
				out = append(out, p.Text)
			}
			return out
		}).Should(ConsistOf(ContainSubstring("unsubscribed")))
		code, body := call(http.MethodPost, "/accounts/"+acct+"/messages", map[string]any{"to": from, "from": number, "body": "Hello?"})
		Expect(code).To(Equal(http.StatusUnprocessableEntity))
		Expect(body["error"]).To(HaveKeyWithValue("type", "opted_out"))
	})

	It("answers 422 carrier_unsupported for registering a campaign, which SMPP cannot", func() {
		code, body := call(http.MethodPost, "/accounts/"+acct+"/campaigns", map[string]any{
			"use_cases":       []string{"account_notification", "customer_care"},
			"description":     "Acme Dental sends appointment reminders to patients who opted in at the front desk.",
			"message_samples": []string{"Your appointment is tomorrow at 10am. Reply STOP to opt out.", "Your car is ready."},
			"consent_flow":    "Patients opt in by checking a box on the intake form.",
			"includes":        []string{"links"}, "privacy_policy_url": "https://acme.example/privacy", "volume": "low",
		})
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", body)
		Expect(body["error"]).To(HaveKeyWithValue("type", "carrier_unsupported"))
		Expect(body["error"]).To(HaveKeyWithValue("message", ContainSubstring("tcr_id")))
	})
})
