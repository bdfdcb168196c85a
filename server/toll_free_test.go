package server_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// tollFreeBody is a complete toll-free verification of a number.
func tollFreeBody(phoneNumberID string) map[string]any {
	return map[string]any{
		"phone_number_id":          phoneNumberID,
		"use_cases":                []string{"account_notification", "delivery_notification"},
		"description":              "Shipping and appointment notifications for customers of DT Precision Auto.",
		"message_samples":          []string{"Your car is ready for pickup. Reply STOP to opt out."},
		"includes":                 []string{},
		"privacy_policy_url":       "https://dtprecisionauto.com/privacy",
		"terms_and_conditions_url": "https://dtprecisionauto.com/terms",
	}
}

// createTollFreeCampaign verifies a toll-free number of an account and returns the campaign.
func (t *tenant) createTollFreeCampaign(account, phoneNumberID string) map[string]any {
	r := t.post("/accounts/"+account+"/toll_free_campaigns", tollFreeBody(phoneNumberID))
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

var _ = Describe("Toll-free campaigns", func() {
	var (
		t        *tenant
		account  string
		tollFree string
	)
	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("DT Precision Auto")
		tollFree = t.buyNumber(account, map[string]any{"type": "toll_free"})["id"].(string)
	})
	path := func(c map[string]any) string { return "/toll_free_campaigns/" + c["id"].(string) }

	Describe("POST /accounts/{account_id}/toll_free_campaigns", func() {
		It("submits the verification, which the simulated registry approves", func() {
			c := t.createTollFreeCampaign(account, tollFree)
			Expect(c).To(Equal(map[string]any{
				"id": c["id"], "phone_number_id": tollFree, "status": "in_review",
				"use_cases":   []any{"account_notification", "delivery_notification"},
				"description": tollFreeBody(tollFree)["description"], "message_samples": []any{"Your car is ready for pickup. Reply STOP to opt out."},
				"includes": []any{}, "privacy_policy_url": "https://dtprecisionauto.com/privacy",
				"terms_and_conditions_url": "https://dtprecisionauto.com/terms",
			}))
			Expect(c["id"]).To(MatchRegexp(`^tfc_[0-7][0-9a-hjkmnp-tv-z]{25}$`))
			Eventually(func() string { return t.statusOfResource(path(c)) }).WithTimeout(reviewTimeout).Should(Equal("active"))
		})

		It("is rejected by the simulated registry when the description has the magic word", func() {
			body := with(tollFreeBody(tollFree), map[string]any{"description": "Sweepstakes " + sim.RejectWord})
			r := t.post("/accounts/"+account+"/toll_free_campaigns", body)
			Expect(r).To(HaveStatus(http.StatusCreated))
			Eventually(func() string { return t.statusOfResource(path(r.JSON())) }).WithTimeout(reviewTimeout).Should(Equal("rejected"))
		})

		It("allows one unfinished verification per number: a second is 409 until the first is canceled", func() {
			first := t.createTollFreeCampaign(account, tollFree)
			Expect(t.post("/accounts/"+account+"/toll_free_campaigns", tollFreeBody(tollFree))).To(HaveConflict())
			Expect(t.delete(path(first))).To(HaveStatus(http.StatusOK))
			t.createTollFreeCampaign(account, tollFree)
		})

		DescribeTable("refuses a phone_number_id that is not a toll-free number of the account with 422",
			func(numberID func() string) {
				Expect(t.post("/accounts/"+account+"/toll_free_campaigns", tollFreeBody(numberID()))).To(HaveFieldError("phone_number_id"))
			},
			Entry("a local number", func() string { return t.buyNumber(account, map[string]any{})["id"].(string) }),
			Entry("a number of another account", func() string {
				return t.buyNumber(t.createAccount("Sibling"), map[string]any{"type": "toll_free"})["id"].(string)
			}),
			Entry("a number of another project", func() string {
				other := newTenant()
				return other.buyNumber(other.createAccount("Theirs"), map[string]any{"type": "toll_free"})["id"].(string)
			}),
			Entry("a released number", func() string {
				Expect(t.delete("/phone_numbers/" + tollFree)).To(HaveStatus(http.StatusOK))
				return tollFree
			}),
			Entry("the shared demo number", func() string { return demoNumberID }),
			Entry("a number that does not exist", func() string { return store.NewID(store.PrefixPhoneNumber) }),
		)

		DescribeTable("validates the body",
			func(change map[string]any, field string) {
				Expect(t.post("/accounts/"+account+"/toll_free_campaigns", with(tollFreeBody(tollFree), change))).To(HaveFieldError(field))
			},
			Entry("phone_number_id missing", map[string]any{"phone_number_id": nil}, "phone_number_id"),
			Entry("includes missing", map[string]any{"includes": nil}, "includes"),
			Entry("terms missing", map[string]any{"terms_and_conditions_url": nil}, "terms_and_conditions_url"),
			Entry("no use case", map[string]any{"use_cases": []string{}}, "use_cases"),
			Entry("a 10DLC-only include", map[string]any{"includes": []string{"links"}}, "includes.0"),
			Entry("an unknown use case", map[string]any{"use_cases": []string{"sweepstakes"}}, "use_cases.0"),
			Entry("no message sample", map[string]any{"message_samples": []string{}}, "message_samples"),
			Entry("a privacy policy that is not a URL", map[string]any{"privacy_policy_url": "privacy"}, "privacy_policy_url"),
			Entry("a status", map[string]any{"status": "active"}, "status"),
		)

		It("refuses an archived account, and answers 404 for another project's", func() {
			theirs := newTenant().createAccount("Theirs")
			Expect(t.post("/accounts/"+theirs+"/toll_free_campaigns", tollFreeBody(tollFree))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.delete("/accounts/" + account)).To(HaveStatus(http.StatusOK))
			Expect(t.post("/accounts/"+account+"/toll_free_campaigns", tollFreeBody(tollFree))).
				To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
		})
	})

	Describe("GET /accounts/{account_id}/toll_free_campaigns and /toll_free_campaigns/{id}", func() {
		It("lists newest first, page by page, and retrieves one", func() {
			var ids []string
			for range 3 {
				c := t.createTollFreeCampaign(account, t.buyNumber(account, map[string]any{"type": "toll_free"})["id"].(string))
				ids = append([]string{c["id"].(string)}, ids...)
			}
			first := t.get("/accounts/" + account + "/toll_free_campaigns?limit=2")
			Expect(first).To(HaveStatus(http.StatusOK), first.String())
			Expect(idsOf(first)).To(Equal(ids[:2]))
			next, _ := cursorsOf(first)
			Expect(idsOf(t.get("/accounts/" + account + "/toll_free_campaigns?limit=2&after=" + next))).To(Equal(ids[2:]))
			Expect(t.get("/toll_free_campaigns/" + ids[0]).JSON()).To(HaveKeyWithValue("id", ids[0]))
		})

		It("answers 404 for another project's", func() {
			c := t.createTollFreeCampaign(account, tollFree)
			other := newTenant()
			Expect(other.get(path(c))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(other.get("/accounts/" + account + "/toll_free_campaigns")).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(other.delete(path(c))).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("DELETE /toll_free_campaigns/{id}", func() {
		DescribeTable("cancels an unfinished campaign and withdraws it at the carrier; a verdict afterwards changes nothing",
			func(approveFirst bool) {
				c := t.createTollFreeCampaign(account, tollFree)
				if approveFirst {
					forceVerdict(c["id"].(string), true)
				}
				registered := func() bool {
					held, err := core.Carriers.Default().(*sim.Carrier).Registered(context.Background(), c["id"].(string))
					Expect(err).NotTo(HaveOccurred())
					return held
				}
				Eventually(registered).Should(BeTrue())
				r := t.delete(path(c))
				Expect(r).To(HaveStatus(http.StatusOK), r.String())
				Expect(r.JSON()).To(HaveKeyWithValue("status", "canceled"))
				Eventually(registered).WithTimeout(reviewTimeout).Should(BeFalse(), "withdrawn from the simulated registry")
				forceVerdict(c["id"].(string), true)
				Expect(t.statusOfResource(path(c))).To(Equal("canceled"))
			},
			Entry("in review", false),
			Entry("active", true),
		)

		DescribeTable("refuses a finished campaign with 409",
			func(finish func(c map[string]any)) {
				c := t.createTollFreeCampaign(account, tollFree)
				finish(c)
				r := t.delete(path(c))
				Expect(r).To(HaveConflict())
			},
			Entry("canceled already", func(c map[string]any) { Expect(t.delete(path(c))).To(HaveStatus(http.StatusOK)) }),
			Entry("rejected", func(c map[string]any) { forceVerdict(c["id"].(string), false) }),
		)
	})
})
