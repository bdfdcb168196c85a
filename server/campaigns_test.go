package server_test

import (
	"context"
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// with returns body with the fields of extra set (nil deletes one).
func with(body map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for k, v := range extra {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

var _ = Describe("Campaigns", func() {
	var (
		t       *tenant
		account string
	)
	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("DT Precision Auto")
	})

	Describe("POST /accounts/{account_id}/campaigns", func() {
		It("registers a campaign, which is in review and approved by the simulated registry", func() {
			c := t.createCampaign(account, campaignBody())
			Expect(c).To(SatisfyAll(
				HaveKeyWithValue("id", MatchRegexp(`^cpn_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
				HaveKeyWithValue("status", "in_review"),
				HaveKeyWithValue("use_cases", []any{"account_notification", "customer_care"}),
				HaveKeyWithValue("description", campaignBody()["description"]),
				HaveKeyWithValue("message_samples", HaveLen(2)),
				HaveKeyWithValue("consent_flow", campaignBody()["consent_flow"]),
				HaveKeyWithValue("includes", []any{"links"}),
				HaveKeyWithValue("privacy_policy_url", "https://dtprecisionauto.com/privacy"),
				Not(HaveKey("terms_and_conditions_url")), // absent when unset, as Surge's Campaign type has it
				Not(HaveKey("link_sample")),
				HaveKeyWithValue("volume", "low"),
				HaveKeyWithValue("tcr_id", BeNil()),
				HaveKey("created_at"),
			))
			id := c["id"].(string)
			Eventually(func() string { return t.statusOfResource("/campaigns/" + id) }).WithTimeout(reviewTimeout).Should(Equal("active"))
			Expect(t.eventEnvelopes("campaign.approved")).To(ConsistOf(Equal(map[string]any{
				"account_id": account, "type": "campaign.approved", "data": map[string]any{"id": id, "status": "active"},
			})))
		})

		It("is rejected by the simulated registry when the description has the magic word", func() {
			id := t.createCampaign(account, with(campaignBody(), map[string]any{"description": "Deals! " + sim.RejectWord}))["id"].(string)
			Eventually(func() string { return t.statusOfResource("/campaigns/" + id) }).WithTimeout(reviewTimeout).Should(Equal("rejected"))
			Expect(t.eventEnvelopes("campaign.approved")).To(BeEmpty())
		})

		It("imports a campaign by TCR id", func() {
			c := t.createCampaign(account, map[string]any{"tcr_id": "CX4ZT1A"})
			Expect(c).To(SatisfyAll(HaveKeyWithValue("tcr_id", "CX4ZT1A"), HaveKeyWithValue("status", "in_review"),
				HaveKeyWithValue("description", ""), HaveKeyWithValue("use_cases", BeEmpty()), HaveKeyWithValue("volume", "low"),
				Not(HaveKey("privacy_policy_url")), Not(HaveKey("terms_and_conditions_url")), Not(HaveKey("link_sample"))),
				"an imported campaign's URLs are absent, never null")
			Eventually(func() string { return t.statusOfResource("/campaigns/" + c["id"].(string)) }).
				WithTimeout(reviewTimeout).Should(Equal("active"))
		})

		It("reports every missing required field at once", func() {
			r := t.post("/accounts/"+account+"/campaigns", map[string]any{"includes": []string{"links"}})
			Expect(r).To(HaveError(http.StatusUnprocessableEntity, "validation_error"))
			Expect(decodeEnvelope(r.Body)["detail"]).To(SatisfyAll(HaveKey("use_cases"), HaveKey("description"),
				HaveKey("message_samples"), HaveKey("consent_flow"), HaveKey("privacy_policy_url"), HaveKey("volume")))
		})

		DescribeTable("refuses an invalid campaign with 422 on the field",
			func(body map[string]any, field string) {
				Expect(t.post("/accounts/"+account+"/campaigns", body)).To(HaveFieldError(field))
			},
			Entry("tcr_id with other fields", with(campaignBody(), map[string]any{"tcr_id": "CX4ZT1A"}), "tcr_id"),
			Entry("no volume", with(campaignBody(), map[string]any{"volume": nil}), "volume"),
			Entry("one message sample", with(campaignBody(), map[string]any{"message_samples": []string{"Hi"}}), "message_samples"),
			Entry("six use cases", with(campaignBody(), map[string]any{"use_cases": []string{"marketing", "fraud_alert",
				"customer_care", "polling_voting", "security_alert", "account_notification"}}), "use_cases"),
			Entry("an unknown use case", with(campaignBody(), map[string]any{"use_cases": []string{"sweepstakes"}}), "use_cases.0"),
			Entry("an unknown include", with(campaignBody(), map[string]any{"includes": []string{"emoji"}}), "includes.0"),
			Entry("a privacy policy that is not a URL", with(campaignBody(), map[string]any{"privacy_policy_url": "privacy"}), "privacy_policy_url"),
			Entry("an empty description", with(campaignBody(), map[string]any{"description": ""}), "description"),
			Entry("an unknown field", with(campaignBody(), map[string]any{"status": "active"}), "status"),
		)

		It("refuses an archived account", func() {
			Expect(t.delete("/accounts/" + account)).To(HaveStatus(http.StatusOK))
			Expect(t.post("/accounts/"+account+"/campaigns", campaignBody())).To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
		})

		It("answers 404 for an account of another project", func() {
			theirs := newTenant().createAccount("Theirs")
			Expect(t.post("/accounts/"+theirs+"/campaigns", campaignBody())).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("GET /accounts/{account_id}/campaigns and /campaigns/{id}", func() {
		It("lists the account's campaigns newest first, page by page", func() {
			var ids []string
			for range 3 {
				ids = append([]string{t.createCampaign(account, campaignBody())["id"].(string)}, ids...)
			}
			t.createCampaign(t.createAccount("Sibling"), campaignBody())
			first := t.get("/accounts/" + account + "/campaigns?limit=2")
			Expect(first).To(HaveStatus(http.StatusOK), first.String())
			Expect(idsOf(first)).To(Equal(ids[:2]))
			next, _ := cursorsOf(first)
			Expect(idsOf(t.get("/accounts/" + account + "/campaigns?limit=2&after=" + next))).To(Equal(ids[2:]))
		})

		It("retrieves a campaign, and answers 404 for another project's", func() {
			c := t.createCampaign(account, campaignBody())
			r := t.get("/campaigns/" + c["id"].(string))
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(Equal(c))
			Expect(newTenant().get("/campaigns/" + c["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(newTenant().get("/accounts/" + account + "/campaigns")).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("PATCH /campaigns/{id}", func() {
		It("amends a campaign in review and leaves the absent fields", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			r := t.patch("/campaigns/"+id, map[string]any{"volume": "high", "link_sample": "https://l.dt.example/s034ij"})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("volume", "high"), HaveKeyWithValue("link_sample", "https://l.dt.example/s034ij"),
				HaveKeyWithValue("description", campaignBody()["description"]), HaveKeyWithValue("status", "in_review")))
		})

		It("has the registry judge the amendment", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			Expect(t.patch("/campaigns/"+id, map[string]any{"description": "Now with " + sim.RejectWord})).To(HaveStatus(http.StatusOK))
			Eventually(func() string { return t.statusOfResource("/campaigns/" + id) }).WithTimeout(reviewTimeout).Should(Equal("rejected"))
		})

		DescribeTable("refuses to change a decided campaign with 409",
			func(approved bool, status string) {
				id := t.createCampaign(account, campaignBody())["id"].(string)
				forceVerdict(id, approved)
				r := t.patch("/campaigns/"+id, map[string]any{"volume": "high"})
				Expect(r).To(HaveConflict())
				Expect(decodeEnvelope(r.Body)).To(HaveKeyWithValue("detail", HaveKeyWithValue("status", status)))
				Expect(t.get("/campaigns/" + id).JSON()).To(HaveKeyWithValue("volume", "low"))
			},
			Entry("active", true, "active"),
			Entry("rejected", false, "rejected"),
		)

		It("refuses to change a deactivated campaign with 409", func() {
			id := t.activeCampaign(account)
			Expect(t.delete("/accounts/" + account)).To(HaveStatus(http.StatusOK))
			Expect(t.patch("/campaigns/"+id, map[string]any{"volume": "high"})).To(HaveConflict())
		})

		It("validates the body and answers 404 for another project's campaign", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			Expect(t.patch("/campaigns/"+id, map[string]any{"tcr_id": "CX4ZT1A"})).To(HaveFieldError("tcr_id"))
			Expect(t.patch("/campaigns/"+id, map[string]any{"volume": "huge"})).To(HaveFieldError("volume"))
			Expect(newTenant().patch("/campaigns/"+id, map[string]any{"volume": "high"})).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("DELETE /campaigns/{id}", func() {
		// simRegistered tells whether the simulated registry still holds a submission.
		simRegistered := func(reference string) bool {
			held, err := core.Carriers.Default().(*sim.Carrier).Registered(context.Background(), reference)
			Expect(err).NotTo(HaveOccurred())
			return held
		}

		It("deactivates an active campaign, detaches its number, emits campaign.deactivated and withdraws it at the carrier", func() {
			id := t.activeCampaign(account)
			Eventually(func() bool { return simRegistered(id) }).Should(BeTrue())
			bought := t.buyNumber(account, map[string]any{"area_code": "617"})
			pn, number := bought["id"].(string), bought["number"].(string)
			Expect(t.patch("/phone_numbers/"+pn, map[string]any{"campaign_id": id})).To(HaveStatus(http.StatusOK))
			Expect(t.post("/accounts/"+account+"/messages", map[string]any{"from": number, "to": "+14155550123", "body": "Hi"})).
				To(HaveStatus(http.StatusCreated))
			r := t.delete("/campaigns/" + id)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("id", id), HaveKeyWithValue("status", "deactivated")))
			Expect(t.get("/phone_numbers/" + pn).JSON()).To(HaveKeyWithValue("campaign",
				map[string]any{"id": id, "attachment_status": "detached"}))
			Expect(t.eventEnvelopes("campaign.deactivated")).To(ConsistOf(Equal(map[string]any{
				"account_id": account, "type": "campaign.deactivated", "data": map[string]any{"id": id, "status": "deactivated"},
			})))
			Eventually(func() bool { return simRegistered(id) }).WithTimeout(reviewTimeout).Should(BeFalse(), "withdrawn from the registry")
			Expect(t.post("/accounts/"+account+"/messages", map[string]any{"from": number, "to": "+14155550123", "body": "Hi"})).
				To(HaveError(http.StatusUnprocessableEntity, "campaign_required"))
		})

		It("deactivates a campaign in review, whose verdict then never comes", func() {
			id := t.createCampaign(account, with(campaignBody(), map[string]any{"description": "Reminders. " + sim.HoldWord}))["id"].(string)
			Eventually(func() bool { return simRegistered(id) }).Should(BeTrue())
			Expect(t.delete("/campaigns/" + id)).To(HaveStatus(http.StatusOK))
			Eventually(func() bool { return simRegistered(id) }).WithTimeout(reviewTimeout).Should(BeFalse())
			forceVerdict(id, true)
			Expect(t.statusOfResource("/campaigns/"+id)).To(Equal("deactivated"), "a late verdict changes nothing")
			Expect(t.eventEnvelopes("campaign.approved")).To(BeEmpty())
		})

		DescribeTable("refuses a finished campaign with 409",
			func(finish func(id string), status string) {
				id := t.createCampaign(account, campaignBody())["id"].(string)
				finish(id)
				r := t.delete("/campaigns/" + id)
				Expect(r).To(HaveConflict())
				Expect(decodeEnvelope(r.Body)).To(HaveKeyWithValue("detail", HaveKeyWithValue("status", status)))
			},
			Entry("deactivated", func(id string) { Expect(t.delete("/campaigns/" + id)).To(HaveStatus(http.StatusOK)) }, "deactivated"),
			Entry("rejected", func(id string) { forceVerdict(id, false) }, "rejected"),
		)

		It("answers 404 for another project's campaign", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			Expect(newTenant().delete("/campaigns/" + id)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.statusOfResource("/campaigns/" + id)).To(Equal("in_review"))
		})

		It("happens to every open campaign of an archived account, each with its event and withdrawal", func() {
			active, pending := t.activeCampaign(account), t.createCampaign(account, campaignBody())["id"].(string)
			rejected := t.createCampaign(account, campaignBody())["id"].(string)
			forceVerdict(rejected, false)
			Expect(t.delete("/accounts/" + account)).To(HaveStatus(http.StatusOK))
			Expect(t.statusOfResource("/campaigns/" + active)).To(Equal("deactivated"))
			Expect(t.statusOfResource("/campaigns/" + pending)).To(Equal("deactivated"))
			Expect(t.statusOfResource("/campaigns/" + rejected)).To(Equal("rejected"))
			Expect(t.eventEnvelopes("campaign.deactivated")).To(ConsistOf(
				HaveKeyWithValue("data", map[string]any{"id": active, "status": "deactivated"}),
				HaveKeyWithValue("data", map[string]any{"id": pending, "status": "deactivated"})))
			Eventually(func() bool { return simRegistered(active) || simRegistered(pending) }).WithTimeout(reviewTimeout).Should(BeFalse())
		})
	})

	Describe("verdicts", func() {
		It("are applied once: a repeated or late verdict changes nothing", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			forceVerdict(id, true)
			forceVerdict(id, true)
			forceVerdict(id, false)
			Expect(t.statusOfResource("/campaigns/" + id)).To(Equal("active"))
			Consistently(func() []map[string]any { return t.eventEnvelopes("campaign.approved") }).
				WithTimeout(2*simReviewDelay).Should(HaveLen(1), "the simulated review's own verdict is ignored too")
		})

		It("that race are applied once, with one event per attachment", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			pending := t.buyNumber(account, map[string]any{"area_code": "617"})["id"].(string)
			Expect(t.patch("/phone_numbers/"+pending, map[string]any{"campaign_id": id})).To(HaveStatus(http.StatusOK))
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					defer GinkgoRecover()
					forceVerdict(id, true)
				})
			}
			wg.Wait()
			Expect(t.eventEnvelopes("campaign.approved")).To(HaveLen(1))
			Expect(t.eventEnvelopes("phone_number.attached_to_campaign")).To(HaveLen(1))
		})

		It("from a carrier that the campaign is not registered with are ignored", func() {
			id := t.createCampaign(account, campaignBody())["id"].(string)
			Expect(core.Reports.Report(context.Background(), carriers.Report{Carrier: "twilio",
				Verdict: &carriers.Verdict{Reference: id, Approved: false}})).To(Succeed())
			Expect(t.statusOfResource("/campaigns/" + id)).To(Equal("in_review"))
		})

		It("about unknown references are ignored without error", func() {
			for _, ref := range []string{store.NewID("cpn"), store.NewID("tfc"), "msg_123"} {
				forceVerdict(ref, true)
			}
		})
	})
})

// bareCarrier is an adapter without any capability.
type bareCarrier struct{}

func (bareCarrier) Name() string { return "bare" }

var _ = Describe("A carrier without number inventory or campaign registry", func() {
	It("answers 422 carrier_unsupported", func() {
		bare, err := service.NewCore(service.CoreConfig{
			Store: st, PublicURL: "https://switchboard.test", Logger: testLogger(),
			Carriers: func(carriers.Reporter) ([]carriers.Carrier, error) { return []carriers.Carrier{bareCarrier{}}, nil },
		})
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		account := t.createAccount("Acme")
		t.api = newAPI(server.Config{Core: bare, RateLimit: -1})
		for _, r := range []*response{
			t.get("/accounts/" + account + "/available_phone_numbers?type=local"),
			t.post("/accounts/"+account+"/phone_numbers", map[string]any{}),
			t.post("/accounts/"+account+"/campaigns", campaignBody()),
		} {
			Expect(r).To(HaveError(http.StatusUnprocessableEntity, "carrier_unsupported"))
		}
	})
})
