package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/carriers/smpp/smsctest"
	"github.com/switchboard/switchboard/carriers/telnyx"
	"github.com/switchboard/switchboard/carriers/telnyx/telnyxtest"
	"github.com/switchboard/switchboard/carriers/twilio"
	"github.com/switchboard/switchboard/carriers/twilio/twiliotest"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// Several carriers in one installation, everything through the public API: Telnyx (the default),
// Twilio and SMPP configured together against their fakes, the simulator beside them. One account
// buys a number from each (carrier named in the purchase), registers a campaign with each carrier's
// registry (Telnyx's and Twilio's approve after their reviews, SMPP's imports by TCR id), attaches
// each number to its carrier's campaign and sends from each: every message goes out through its
// number's carrier and its receipt comes back through it; an inbound MMS through Telnyx arrives
// with its media copied. The suite has a database of its own.
var _ = Describe("Several carriers in one installation", Ordered, func() {
	var (
		tst     *store.Store
		tw      *twiliotest.Fake
		tx      *telnyxtest.Fake
		smsc    *smsctest.SMSC
		t       *tenant
		account string
		// numbers by carrier.
		numbers = map[string]string{}
	)
	const public = "https://switchboard.test"

	events := func(typ string) []map[string]any {
		evs, _, err := tst.ListEvents(context.Background(), t.ProjectID, typ, store.Page{Limit: 100})
		Expect(err).NotTo(HaveOccurred())
		var out []map[string]any
		for _, e := range evs {
			var d map[string]any
			Expect(json.Unmarshal([]byte(e.Data), &d)).To(Succeed())
			out = append(out, d)
		}
		return out
	}

	BeforeAll(func(ctx context.Context) {
		var cleanup func()
		var err error
		tst, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		tw, tx = twiliotest.New(), telnyxtest.New()
		DeferCleanup(tw.Close)
		DeferCleanup(tx.Close)
		smsc, err = smsctest.Start(smsctest.Config{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(smsc.Close)
		var (
			twc *twilio.Carrier
			txc *telnyx.Carrier
			smc *smpp.Carrier
		)
		core, err := service.NewCore(service.CoreConfig{
			Store: tst, PublicURL: public, Logger: testLogger(), WebhookAllowPrivate: true,
			Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
				var err error
				if txc, err = telnyx.New(telnyx.Config{APIKey: telnyxtest.APIKey, PublicKey: tx.PublicKey,
					MessagingProfileID: telnyxtest.MessagingProfileID, APIBase: tx.URL, PublicURL: public, Store: tst.Telnyx(),
					Reporter: r, PollMin: 20 * time.Millisecond, PollMax: 200 * time.Millisecond, Logger: testLogger()}); err != nil {
					return nil, err
				}
				if twc, err = twilio.New(twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken,
					APIBase: tw.URL, MessagingAPIBase: tw.URL, TrustHubAPIBase: tw.URL, PublicURL: public, Store: tst.Twilio(),
					Reporter: r, PollMin: 20 * time.Millisecond, PollMax: 200 * time.Millisecond, Logger: testLogger()}); err != nil {
					return nil, err
				}
				if smc, err = smpp.New(smpp.Config{Addr: smsc.Addr(), SystemID: "test", Password: "secret", Store: tst.SMPP(),
					Reporter: r, ReconnectMin: 20 * time.Millisecond, Logger: testLogger()}); err != nil {
					return nil, err
				}
				s, err := sim.New(sim.Config{Store: tst.Sim(), Reporter: r, Logger: testLogger()})
				return []carriers.Carrier{txc, twc, smc, s}, err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		smc.Start()
		DeferCleanup(smc.Close)
		workers, err := core.StartWorkers(context.WithoutCancel(ctx))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(workers.Stop(ctx)).To(Succeed()) })
		api := newAPI(server.Config{Core: core, RateLimit: -1, Now: time.Now,
			CarrierRoutes: map[string]http.Handler{twilio.Name: twc.Handler(), telnyx.Name: txc.Handler()}})
		tw.Callbacks, tx.Webhooks = api, api

		p, err := tst.CreateProject(ctx, "several carriers")
		Expect(err).NotTo(HaveOccurred())
		k, secret, err := tst.CreateAPIKey(ctx, p.ID, false)
		Expect(err).NotTo(HaveOccurred())
		t = &tenant{ProjectID: p.ID, KeyID: k.ID, Key: secret, api: api}
		r := t.post("/accounts", map[string]any{"name": "Acme Dental", "organization": acmeOrganization()})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		account = r.JSON()["id"].(string)
		pool, err := smpp.PoolNumberOf("+14155550160", time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(tst.SMPP().AddPoolNumbers(ctx, []smpp.PoolNumber{pool})).To(Succeed())
	})

	It("buys a number from each carrier named, the default without a name", func() {
		numbers[telnyx.Name] = t.buyNumber(account, map[string]any{"area_code": "415"})["number"].(string)
		Expect(tx.Owned(numbers[telnyx.Name])).To(BeTrue(), "the default carrier is Telnyx")
		numbers[twilio.Name] = t.buyNumber(account, map[string]any{"area_code": "415", "carrier": "twilio"})["number"].(string)
		Expect(tw.Owned(numbers[twilio.Name])).NotTo(BeNil())
		numbers[smpp.Name] = t.buyNumber(account, map[string]any{"phone_number": "+14155550160", "carrier": "smpp"})["number"].(string)
		Expect(t.post("/accounts/"+account+"/phone_numbers", map[string]any{"area_code": "415", "carrier": "nexmo"})).
			To(HaveFieldError("carrier"))
		Expect(t.get("/accounts/" + account + "/available_phone_numbers?type=local&carrier=smpp").JSON()["data"]).To(BeEmpty(),
			"the route's one number is held")
	})

	It("registers a campaign with each carrier's registry, attaches each number to its own", func() {
		ids := map[string]string{}
		for _, c := range []string{telnyx.Name, twilio.Name} {
			ids[c] = t.createCampaign(account, with(campaignBody(), map[string]any{"carrier": c}))["id"].(string)
		}
		ids[smpp.Name] = t.createCampaign(account, map[string]any{"tcr_id": "CSMPP01", "carrier": "smpp"})["id"].(string)
		for c, id := range ids {
			Eventually(func() string { return t.statusOfResource("/campaigns/" + id) }).WithTimeout(20*time.Second).Should(Equal("active"), c)
			r := t.get("/accounts/" + account + "/phone_numbers?limit=100")
			for _, n := range r.JSON()["data"].([]any) {
				pn := n.(map[string]any)
				if pn["number"] == numbers[c] {
					Expect(t.patch("/phone_numbers/"+pn["id"].(string), map[string]any{"campaign_id": id})).To(HaveStatus(http.StatusOK))
				}
			}
		}
		other := t.buyNumber(account, map[string]any{"area_code": "212"})["id"].(string)
		Expect(t.patch("/phone_numbers/"+other, map[string]any{"campaign_id": ids[twilio.Name]})).To(HaveFieldError("campaign_id"),
			"a Telnyx number cannot join a Twilio campaign")
		Eventually(func() string { return tx.Assigned(numbers[telnyx.Name]) }).ShouldNot(BeEmpty(), "assigned at Telnyx")
		Eventually(func() map[string][]string { return tw.ServiceNumbers() }).Should(ContainElement([]string{numbers[twilio.Name]}))
	})

	It("sends each message through its number's carrier, each receipt coming back through it", func() {
		for _, c := range []string{telnyx.Name, twilio.Name, smpp.Name} {
			to := newHandset()
			m := t.send(account, map[string]any{"from": numbers[c], "to": to, "body": "Hello from " + c})
			Eventually(func() string { return t.statusOfResource("/messages/" + m["id"].(string)) }).WithTimeout(20*time.Second).
				Should(Equal("delivered"), c)
			Expect(tx.MessagesTo(to)).To(HaveLen(map[bool]int{true: 1}[c == telnyx.Name]), c)
			Expect(tw.MessagesTo(to)).To(HaveLen(map[bool]int{true: 1}[c == twilio.Name]), c)
			var viaSMSC int
			for _, p := range smsc.Parts() {
				if p.To == to {
					viaSMSC++
				}
			}
			Expect(viaSMSC).To(Equal(map[bool]int{true: 1}[c == smpp.Name]), c)
		}
	})

	It("receives an MMS through Telnyx with its media copied, and an SMS through Twilio and SMPP, each in its number's conversation", func() {
		png := []byte("\x89PNG\r\n\x1a\n from telnyx")
		status, _, urls := tx.Inbound(public+telnyx.CallbackPath+"/webhooks", newHandset(), numbers[telnyx.Name], "Photo via Telnyx",
			telnyxtest.File{ContentType: "image/png", Data: png})
		Expect(status).To(Equal(http.StatusOK))
		Expect(tw.Inbound(public+twilio.CallbackPath+"/messages/inbound", newHandset(), numbers[twilio.Name], "Via Twilio").Status).
			To(Equal(http.StatusOK))
		Expect(smsc.SendMO(newHandset(), numbers[smpp.Name], "Via SMPP")).To(Succeed())
		var mms map[string]any
		Eventually(func() []string {
			var bodies []string
			for _, e := range events("message.received") {
				bodies = append(bodies, e["body"].(string))
				if e["body"] == "Photo via Telnyx" {
					mms = e
				}
			}
			return bodies
		}).WithTimeout(20 * time.Second).Should(ConsistOf("Photo via Telnyx", "Via Twilio", "Via SMPP"))
		Expect(mms["conversation"].(map[string]any)["phone_number"].(map[string]any)["number"]).To(Equal(numbers[telnyx.Name]))
		att := mms["attachments"].([]any)[0].(map[string]any)
		Expect(att).To(HaveKeyWithValue("status", "available"))
		Expect(t.get("/messages/" + mms["id"].(string)).String()).NotTo(ContainSubstring(urls[0]))
		file := t.get(strings.TrimPrefix(att["url"].(string), public))
		Expect(file).To(HaveStatus(http.StatusFound))
		Expect(t.withKey("").get(strings.TrimPrefix(file.Header.Get("Location"), public)).Body).To(Equal(png))
	})

	AfterAll(func() {
		Expect(tw.Violations()).To(BeEmpty())
		Expect(tx.Violations()).To(BeEmpty())
	})
})
