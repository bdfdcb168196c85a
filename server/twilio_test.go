package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/twilio"
	"github.com/switchboard/switchboard/carriers/twilio/twiliotest"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// The messaging core's registration, send, receive and opt-out paths with Twilio as the carrier:
// the API stack, a core whose default carrier is the Twilio adapter pointed at a fake Twilio, and
// the fake posting signed callbacks to the server's /carriers/twilio/… routes. It has a database of
// its own, so that its job workers and the suite's never take each other's jobs.
var _ = Describe("Twilio end to end", Ordered, func() {
	var (
		tst      *store.Store
		fake     *twiliotest.Fake
		t        *tenant
		account  string
		number   string
		campaign string
	)
	inboundURL := "https://switchboard.test" + twilio.CallbackPath + "/messages/inbound"

	BeforeAll(func(ctx context.Context) {
		var cleanup func()
		var err error
		tst, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		fake = twiliotest.New()
		DeferCleanup(fake.Close)
		var tw *twilio.Carrier
		tcore, err := service.NewCore(service.CoreConfig{
			Store: tst, PublicURL: "https://switchboard.test", Logger: testLogger(),
			// Inbound media is fetched from the fake, on loopback.
			WebhookAllowPrivate: true,
			Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
				var err error
				tw, err = twilio.New(twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken,
					APIBase: fake.URL, MessagingAPIBase: fake.URL, TrustHubAPIBase: fake.URL, PublicURL: "https://switchboard.test",
					PollMin: 20 * time.Millisecond, PollMax: 200 * time.Millisecond, Store: tst.Twilio(), Reporter: r, Logger: testLogger()})
				return []carriers.Carrier{tw}, err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		workers, err := tcore.StartWorkers(context.WithoutCancel(ctx))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(workers.Stop(ctx)).To(Succeed()) })
		tapi := newAPI(server.Config{Core: tcore, RateLimit: -1, Now: time.Now,
			CarrierRoutes: map[string]http.Handler{twilio.Name: tw.Handler()}})
		fake.Callbacks = tapi

		p, err := tst.CreateProject(ctx, "twilio end to end")
		Expect(err).NotTo(HaveOccurred())
		k, secret, err := tst.CreateAPIKey(ctx, p.ID, false)
		Expect(err).NotTo(HaveOccurred())
		t = &tenant{ProjectID: p.ID, KeyID: k.ID, Key: secret, api: tapi}
		r := t.post("/accounts", map[string]any{"name": "Acme Dental", "organization": acmeOrganization()})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		account = r.JSON()["id"].(string)

		// Everything through the API: the number is bought from Twilio, the campaign registered
		// at Twilio (TrustHub profile and trust product, brand, Messaging Service, US A2P
		// registration) and approved there, and the number attached to it.
		bought := t.buyNumber(account, map[string]any{"area_code": "415"})
		number = bought["number"].(string)
		Expect(fake.Owned(number)).To(HaveValue(HaveField("SmsURL", inboundURL)))
		campaign = t.createCampaign(account, campaignBody())["id"].(string)
		Eventually(func() string { return t.statusOfResource("/campaigns/" + campaign) }).WithTimeout(20 * time.Second).Should(Equal("active"))
		Expect(t.patch("/phone_numbers/"+bought["id"].(string), map[string]any{"campaign_id": campaign})).To(HaveStatus(http.StatusOK))
		Eventually(func() map[string][]string { return fake.ServiceNumbers() }).WithTimeout(20*time.Second).
			Should(ContainElement(ConsistOf(number)), "the number is added to the campaign's Messaging Service")
	})

	AfterEach(func() { Expect(fake.Violations()).To(BeEmpty()) })

	It("records the bought number as Twilio's", func() {
		var carrier string
		Expect(tst.DB().Raw(`SELECT carrier FROM phone_numbers WHERE number = ?`, number).Scan(&carrier).Error).To(Succeed())
		Expect(carrier).To(Equal(twilio.Name))
	})

	It("registered the campaign at Twilio once: one brand, one Messaging Service, one A2P registration", func() {
		Expect(fake.Counts()).To(SatisfyAll(HaveKeyWithValue("brands", 1), HaveKeyWithValue("services", 1),
			HaveKeyWithValue("usa2p", 1), HaveKeyWithValue("bundles", 2)))
	})

	It("sends a message through Twilio, which reports it delivered with a signed status callback", func() {
		handset := newHandset()
		m := t.send(account, map[string]any{"from": number, "to": handset, "body": "Your appointment is tomorrow at 10am."})
		t.awaitStatus(m["id"].(string), "delivered")
		sent := fake.MessagesTo(handset)
		Expect(sent).To(HaveLen(1))
		Expect(sent[0]).To(SatisfyAll(HaveField("From", number), HaveField("Body", "Your appointment is tomorrow at 10am."),
			HaveField("MessagingServiceSID", HavePrefix("MG")),
			HaveField("StatusCallback", "https://switchboard.test/carriers/twilio/messages/status?reference="+m["id"].(string))))
	})

	It("fails a message Twilio reports undelivered, with the mapped failure reason", func() {
		handset := newHandset()
		fake.FailTo(handset, 30007)
		m := t.send(account, map[string]any{"from": number, "to": handset, "body": "Big sale today!"})
		Expect(t.awaitStatus(m["id"].(string), "failed")["failure_reason"]).To(Equal(carriers.FailureCarrierFiltered))
	})

	It("stores a message Twilio posts to the inbound route as received", func(ctx SpecContext) {
		handset := newHandset()
		cb := fake.Inbound(inboundURL, handset, number, "Can I move my appointment?")
		Expect(cb.Status).To(Equal(http.StatusOK))
		var status string
		Expect(tst.DB().WithContext(ctx).Raw(`SELECT status FROM messages WHERE carrier = 'twilio' AND carrier_id = ?`,
			cb.Params.Get("MessageSid")).Scan(&status).Error).To(Succeed())
		Expect(status).To(Equal("received"))
		Expect(fake.Inbound(inboundURL, handset, number, "Can I move my appointment?").Status).To(Equal(http.StatusOK))
	})

	It("copies an inbound MMS's media with the account's credentials before message.received, and serves it as ours", func(ctx SpecContext) {
		png := []byte("\x89PNG\r\n\x1a\nfake image")
		cb := fake.InboundMMS(inboundURL, newHandset(), number, "Here is the dent", twiliotest.File{ContentType: "image/png", Data: png})
		Expect(cb.Status).To(Equal(http.StatusOK))
		carrierURL := cb.Params.Get("MediaUrl0")
		var received map[string]any
		Eventually(func() []map[string]any {
			evs, _, err := tst.ListEvents(ctx, t.ProjectID, "message.received", store.Page{Limit: 100})
			Expect(err).NotTo(HaveOccurred())
			var out []map[string]any
			for _, e := range evs {
				var d map[string]any
				Expect(json.Unmarshal([]byte(e.Data), &d)).To(Succeed())
				if out = append(out, d); d["body"] == "Here is the dent" {
					received = d
				}
			}
			return out
		}).WithTimeout(20 * time.Second).Should(ContainElement(HaveKeyWithValue("body", "Here is the dent")))
		Expect(fake.MediaFetches(carrierURL)).To(Equal(1))
		atts := received["attachments"].([]any)
		Expect(atts).To(ConsistOf(SatisfyAll(HaveKeyWithValue("type", "image"), HaveKeyWithValue("status", "available"),
			HaveKeyWithValue("url", HavePrefix("https://switchboard.test/attachments/att_")))))
		msg := t.get("/messages/" + received["id"].(string))
		Expect(msg.String()).NotTo(ContainSubstring(carrierURL), "the carrier's URL is never handed out")
		Expect(msg.String()).NotTo(ContainSubstring(fake.URL))
		file := t.get(strings.TrimPrefix(atts[0].(map[string]any)["url"].(string), "https://switchboard.test"))
		Expect(file).To(HaveStatus(http.StatusFound))
		signed := file.Header.Get("Location")
		Expect(signed).To(HavePrefix("https://switchboard.test/files/"))
		got := t.withKey("").get(strings.TrimPrefix(signed, "https://switchboard.test"))
		Expect(got).To(HaveStatus(http.StatusOK))
		Expect(got.Header.Get("Content-Type")).To(Equal("image/png"))
		Expect(got.Body).To(Equal(png))
	})

	It("opts a contact out on STOP through Twilio and confirms through Twilio", func(ctx SpecContext) {
		handset := newHandset()
		Expect(fake.Inbound(inboundURL, handset, number, "STOP").Status).To(Equal(http.StatusOK))
		var optedOut bool
		Expect(tst.DB().WithContext(ctx).Raw(`SELECT opted_out FROM contacts WHERE project_id = ? AND phone_number = ?`,
			t.ProjectID, handset).Scan(&optedOut).Error).To(Succeed())
		Expect(optedOut).To(BeTrue())
		Eventually(func() []twiliotest.Message { return fake.MessagesTo(handset) }).WithTimeout(20 * time.Second).
			Should(ConsistOf(HaveField("Body", ContainSubstring("unsubscribed"))))
		r := t.post("/accounts/"+account+"/messages", map[string]any{"from": number, "to": handset, "body": "Still there?"})
		Expect(r.Status).NotTo(Equal(http.StatusCreated), r.String())
	})

	It("withdraws the campaign at Twilio when it is deactivated", func() {
		Expect(t.delete("/campaigns/" + campaign)).To(HaveStatus(http.StatusOK))
		Eventually(func() map[string]int { return fake.Counts() }).WithTimeout(20 * time.Second).Should(HaveKeyWithValue("usa2p", 0))
	})

	It("refuses an unsigned or wrongly signed callback with 403 through the server", func() {
		params := url.Values{"MessageSid": {"SM1"}, "From": {newHandset()}, "To": {number}, "Body": {"STOP"}}
		Expect(fake.PostSigned(inboundURL, params, "").Status).To(Equal(http.StatusForbidden))
		Expect(fake.PostSigned(inboundURL, params, twilio.Signature("not-the-token", inboundURL, params)).Status).To(Equal(http.StatusForbidden))
		cb := fake.PostSigned(inboundURL, params, "")
		Expect(decodeEnvelope([]byte(cb.Body))).To(HaveKeyWithValue("type", "forbidden"), "in the envelope, as every refusal")
	})

	It("answers a method the callbacks do not take, HEAD included, with 405 in the envelope", func() {
		path := strings.TrimPrefix(inboundURL, "https://switchboard.test")
		anonymous := t.withKey("")
		Expect(anonymous.get(path)).To(HaveError(http.StatusMethodNotAllowed, "method_not_allowed"))
		head := anonymous.request(http.MethodHead, path, nil)
		Expect(head.Status).To(Equal(http.StatusMethodNotAllowed))
		Expect(head.Body).To(BeEmpty())
		Expect(anonymous.get(twilio.CallbackPath + "/nothing/here")).To(HaveError(http.StatusNotFound, "not_found"))
	})
})

// acmeOrganization is a complete organization, as Twilio registers a brand with it.
func acmeOrganization() map[string]any {
	return map[string]any{
		"registered_name": "Acme Dental LLC", "type": "llc", "industry": "healthcare", "website": "https://acmedental.example",
		"email": "compliance@acmedental.example", "identifier": "12-3456789", "identifier_type": "ein", "country": "US",
		"regions_of_operation": []string{"usa_and_canada"},
		"address": map[string]any{"name": "Acme Dental LLC", "line1": "1 Market St", "locality": "San Francisco", "region": "CA",
			"postal_code": "94105", "country": "US"},
		"contact": map[string]any{"first_name": "Ada", "last_name": "Lopez", "email": "ada@acmedental.example",
			"phone_number": "+14155550142", "title": "ceo"},
	}
}
