package server_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// soleProprietor is an organization whose brand a registry verifies by a code texted to mobile.
func soleProprietor(mobile string) map[string]any {
	org := fullOrganization()
	org["type"], org["mobile_number"] = "sole_proprietor", mobile
	return org
}

// campaignUnderReview records a campaign of the account that the registry of carrier has yet to
// decide: it is never submitted, so no verdict ends its review during the spec.
func campaignUnderReview(t *tenant, account, carrier string) string {
	id, now := store.NewID(store.PrefixCampaign), time.Now().UTC()
	ExpectWithOffset(1, st.DB().Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, '{}', ?, ?)`, id, t.ProjectID, account, carrier, store.CampaignInReview, now, now).Error).To(Succeed())
	return id
}

var _ = Describe("POST /accounts/{account_id}/brand_verification_messages", func() {
	var t *tenant
	BeforeEach(func() { t = newTenant() })

	account := func(org map[string]any) string {
		r := t.post("/accounts", map[string]any{"name": "Mia's Dog Walking", "organization": org})
		ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
		return r.JSON()["id"].(string)
	}

	It("answers 202 enqueued, and the registry texts the sole proprietor's mobile a code", func() {
		mobile := newHandset()
		acct := account(soleProprietor(mobile))
		campaignUnderReview(t, acct, sim.Name)
		for range 2 {
			r := t.post("/accounts/"+acct+"/brand_verification_messages", nil)
			Expect(r).To(HaveStatus(http.StatusAccepted), r.String())
			Expect(r.JSON()).To(Equal(map[string]any{"status": "enqueued"}))
		}
		Eventually(func() []sim.OutboxEntry { return outbox(mobile) }).WithTimeout(20*time.Second).Should(SatisfyAll(
			HaveLen(2), HaveEach(SatisfyAll(HaveField("From", sim.RegistrySender), HaveField("Body", MatchRegexp(`\b\d{6}\b`))))),
			"each request sends a code")
	})

	DescribeTable("answers 409 conflict when no sole proprietor's brand awaits verification",
		func(org func() map[string]any, underReview bool) {
			acct := account(org())
			if underReview {
				campaignUnderReview(t, acct, sim.Name)
			}
			r := t.post("/accounts/"+acct+"/brand_verification_messages", nil)
			Expect(r).To(HaveError(http.StatusConflict, "conflict"))
			Expect(r.Header.Get("X-Should-Retry")).To(Equal("false"))
		},
		Entry("an LLC", fullOrganization, true),
		Entry("a sole proprietor without a mobile number", func() map[string]any {
			org := soleProprietor("")
			delete(org, "mobile_number")
			return org
		}, true),
		Entry("a sole proprietor without a campaign under review", func() map[string]any { return soleProprietor(newHandset()) }, false),
	)

	It("answers 404 for another project's account and 422 for an archived one", func() {
		acct := account(soleProprietor(newHandset()))
		campaignUnderReview(t, acct, sim.Name)
		Expect(newTenant().post("/accounts/"+acct+"/brand_verification_messages", nil)).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.delete("/accounts/" + acct)).To(HaveStatus(http.StatusOK))
		Expect(t.post("/accounts/"+acct+"/brand_verification_messages", nil)).To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
	})

	It("answers 422 carrier_unsupported when the campaign's registry cannot send the code", func() {
		bare, err := service.NewCore(service.CoreConfig{
			Store: st, PublicURL: "https://switchboard.test", Logger: testLogger(),
			Carriers: func(carriers.Reporter) ([]carriers.Carrier, error) { return []carriers.Carrier{bareCarrier{}}, nil },
		})
		Expect(err).NotTo(HaveOccurred())
		acct := account(soleProprietor(newHandset()))
		campaignUnderReview(t, acct, bareCarrier{}.Name())
		t.api = newAPI(server.Config{Core: bare, RateLimit: -1})
		Expect(t.post("/accounts/"+acct+"/brand_verification_messages", nil)).To(HaveError(http.StatusUnprocessableEntity, "carrier_unsupported"))
		var jobs int64
		Expect(st.DB().WithContext(context.Background()).Raw(`SELECT COUNT(*) FROM river_job WHERE kind = 'brand_verification_send' AND CAST(args AS TEXT) LIKE ?`,
			"%"+acct+"%").Scan(&jobs).Error).To(Succeed())
		Expect(jobs).To(BeZero(), "nothing is enqueued")
	})
})
