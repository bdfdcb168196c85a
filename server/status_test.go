package server_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Registration for local messaging", func() {
	var (
		t       *tenant
		account string
	)
	BeforeEach(func() {
		t = newTenant()
		r := t.post("/accounts", map[string]any{"name": "DT Precision Auto", "organization": fullOrganization()})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		account = r.JSON()["id"].(string)
	})
	localStatus := func() map[string]any {
		return localMessaging(t.get("/accounts/" + account + "/status?capabilities=local_messaging"))
	}
	errorTypes := func() []any {
		var types []any
		for _, e := range localStatus()["errors"].([]any) {
			types = append(types, e.(map[string]any)["type"])
		}
		return types
	}

	It("goes from buying a number to ready: campaign, review, attachment, events", func() {
		Expect(localStatus()).To(SatisfyAll(HaveKeyWithValue("status", "error"), HaveKeyWithValue("fields_needed", BeEmpty())),
			"a capability whose status lists errors is error, as Surge's AccountStatus has it")
		Expect(errorTypes()).To(ConsistOf("campaign_required"))

		number := t.buyNumber(account, map[string]any{"area_code": "415"})
		campaign := t.createCampaign(account, campaignBody())["id"].(string)
		Eventually(func() string { return t.statusOfResource("/campaigns/" + campaign) }).
			WithTimeout(reviewTimeout).Should(Equal("active"), "the simulated registry approves it")
		Expect(localStatus()).To(HaveKeyWithValue("status", "error"), "no number is attached yet")

		r := t.patch("/phone_numbers/"+number["id"].(string), map[string]any{"campaign_id": campaign})
		Expect(r).To(HaveStatus(http.StatusOK), r.String())
		Expect(r.JSON()).To(HaveKeyWithValue("campaign", map[string]any{"id": campaign, "attachment_status": "attached"}))
		Expect(localStatus()).To(Equal(map[string]any{"status": "ready", "fields_needed": []any{}, "errors": []any{}}))

		Expect(t.eventEnvelopes("campaign.approved")).To(ConsistOf(HaveKeyWithValue("data", map[string]any{"id": campaign, "status": "active"})))
		Expect(t.eventEnvelopes("phone_number.attached_to_campaign")).To(ConsistOf(SatisfyAll(
			HaveKeyWithValue("account_id", account),
			HaveKeyWithValue("data", SatisfyAll(HaveKeyWithValue("id", number["id"]), HaveKeyWithValue("campaign_id", campaign))),
		)))
	})

	It("becomes ready when a pending attachment's campaign is approved", func() {
		number := t.buyNumber(account, map[string]any{"area_code": "415"})["id"].(string)
		campaign := t.createCampaign(account, campaignBody())["id"].(string)
		Expect(t.patch("/phone_numbers/"+number, map[string]any{"campaign_id": campaign})).To(HaveStatus(http.StatusOK))
		Expect(localStatus()).To(HaveKeyWithValue("status", "error"))
		Eventually(localStatus).WithTimeout(reviewTimeout).Should(HaveKeyWithValue("status", "ready"))
	})

	It("is not ready while the organization lacks fields, whatever is registered", func() {
		org := fullOrganization()
		delete(org, "website")
		r := t.post("/accounts", map[string]any{"name": "No website", "organization": org})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		account = r.JSON()["id"].(string)
		number := t.buyNumber(account, map[string]any{})["id"].(string)
		Expect(t.patch("/phone_numbers/"+number, map[string]any{"campaign_id": t.activeCampaign(account)})).To(HaveStatus(http.StatusOK))
		Expect(localStatus()).To(SatisfyAll(HaveKeyWithValue("status", "incomplete"),
			HaveKeyWithValue("fields_needed", ConsistOf("organization.website")), HaveKeyWithValue("errors", BeEmpty())))
	})

	It("is no longer ready once the attached number is released", func() {
		number := t.buyNumber(account, map[string]any{})["id"].(string)
		Expect(t.patch("/phone_numbers/"+number, map[string]any{"campaign_id": t.activeCampaign(account)})).To(HaveStatus(http.StatusOK))
		Expect(localStatus()).To(HaveKeyWithValue("status", "ready"))
		Expect(t.delete("/phone_numbers/" + number)).To(HaveStatus(http.StatusOK))
		Expect(localStatus()).To(HaveKeyWithValue("status", "error"))
	})

	It("archiving the account releases its numbers and ends its campaigns in one go", func() {
		local := t.buyNumber(account, map[string]any{"area_code": "206"})
		tollFree := t.buyNumber(account, map[string]any{"type": "toll_free", "area_code": "888"})
		active := t.activeCampaign(account)
		inReview := t.createCampaign(account, campaignBody())["id"].(string)
		rejected := t.createCampaign(account, campaignBody())["id"].(string)
		forceVerdict(rejected, false)
		Expect(t.patch("/phone_numbers/"+local["id"].(string), map[string]any{"campaign_id": active})).To(HaveStatus(http.StatusOK))
		verification := t.createTollFreeCampaign(account, tollFree["id"].(string))["id"].(string)

		r := t.delete("/accounts/" + account)
		Expect(r).To(HaveStatus(http.StatusOK), r.String())

		for _, n := range []map[string]any{local, tollFree} {
			Expect(t.get("/phone_numbers/" + n["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
		}
		Expect(idsOf(t.get("/accounts/" + account + "/phone_numbers"))).To(BeEmpty())
		Expect(t.statusOfResource("/campaigns/" + active)).To(Equal("deactivated"))
		Expect(t.statusOfResource("/campaigns/" + inReview)).To(Equal("deactivated"))
		Expect(t.statusOfResource("/campaigns/" + rejected)).To(Equal("rejected"))
		Expect(t.statusOfResource("/toll_free_campaigns/" + verification)).To(Equal("canceled"))
		Expect(localStatus()).To(HaveKeyWithValue("status", "error"))

		other := newTenant()
		otherAccount := other.createAccount("Next owner")
		Eventually(func() []string { return other.available(otherAccount, "type=local&area_code=206&limit=100") }).
			WithTimeout(reviewTimeout).Should(ContainElement(local["number"]), "the carrier got the number back")
		Eventually(func() []string { return other.available(otherAccount, "type=toll_free&area_code=888&limit=100") }).
			WithTimeout(reviewTimeout).Should(ContainElement(tollFree["number"]))

		Expect(t.delete("/accounts/"+account)).To(HaveStatus(http.StatusOK), "archiving again changes nothing")
		forceVerdict(inReview, true)
		Expect(t.statusOfResource("/campaigns/"+inReview)).To(Equal("deactivated"), "a late verdict changes nothing")
	})
})
