package carriertest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
)

// campaignRegistrySpecs: what the core relies on when it registers and withdraws campaigns.
// Verdicts arrive through the Reporter, name the submission's reference, come from the adapter's
// Name, and are reported again until the reporter accepts one; a withdrawal removes the
// submission from the registry. Operations the harness declares unsupported must answer
// carriers.ErrUnsupported, and their specs stop there.
func campaignRegistrySpecs(h *Harness) {
	Describe("CampaignRegistry", func() {
		var reg carriers.CampaignRegistry
		BeforeEach(func() {
			var ok bool
			if reg, ok = h.Carrier.(carriers.CampaignRegistry); !ok {
				Skip(h.Carrier.Name() + " has no campaign registry")
			}
		})

		// supported checks the answer to op: ErrUnsupported (and the spec ends) where the harness
		// declares op unsupported, success otherwise.
		supported := func(op Operation, err error) {
			if h.unsupported(op) {
				ExpectWithOffset(1, err).To(MatchError(carriers.ErrUnsupported))
				Skip(h.Carrier.Name() + " does not support " + string(op))
			}
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
		}
		// verdict waits for the one verdict about reference and returns it.
		verdict := func(reference string) carriers.Verdict {
			var got []carriers.Verdict
			EventuallyWithOffset(1, func() []carriers.Verdict {
				got = h.Reports.Verdicts(reference)
				return got
			}).WithTimeout(h.Timeout).Should(HaveLen(1))
			return got[0]
		}
		// reportedBy checks that every report about reference came from the adapter under test.
		reportedBy := func(reference string) {
			for _, r := range h.Reports.Reports() {
				if r.Verdict != nil && r.Verdict.Reference == reference {
					ExpectWithOffset(1, r.Carrier).To(Equal(h.Carrier.Name()))
				}
			}
		}
		skipWithoutRejection := func() {
			if h.RejectDescription == "" {
				Skip("the harness has no description that the registry rejects")
			}
		}
		skipWithoutLook := func() {
			if h.Registered == nil {
				Skip("the harness cannot look into the registry")
			}
		}

		It("approves a campaign through the reporter, naming the campaign by its reference", func(ctx SpecContext) {
			c := Campaign("Acme Dental sends appointment reminders to patients who opted in at the front desk.")
			supported(Registration, reg.SubmitCampaign(ctx, c))
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
			reportedBy(c.Reference)
		})

		It("rejects a campaign with a reason", func(ctx SpecContext) {
			skipWithoutRejection()
			c := Campaign(h.RejectDescription)
			supported(Registration, reg.SubmitCampaign(ctx, c))
			Expect(verdict(c.Reference)).To(SatisfyAll(HaveField("Approved", false), HaveField("Reason", Not(BeEmpty()))))
		})

		It("reports one verdict for a submission repeated under the same reference", func(ctx SpecContext) {
			c := Campaign("Acme Dental sends appointment reminders.")
			supported(Registration, reg.SubmitCampaign(ctx, c))
			c.Description += " It also answers questions about invoices."
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed(), "a repeated reference amends the submission")
			verdict(c.Reference)
			Consistently(func() []carriers.Verdict { return h.Reports.Verdicts(c.Reference) }).
				WithTimeout(time.Second).Should(HaveLen(1))
		})

		It("imports a campaign by TCR id", func(ctx SpecContext) {
			c := carriers.CampaignSubmission{Reference: newReference("cpn"), AccountID: newReference("acct"), TCRID: "CX4ZT1A"}
			supported(Import, reg.SubmitCampaign(ctx, c))
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
			reportedBy(c.Reference)
		})

		It("verifies a toll-free number through the reporter", func(ctx SpecContext) {
			t := TollFree("Acme Shop sends shipping notifications to customers who asked for them at checkout.")
			supported(TollFreeVerification, reg.SubmitTollFreeVerification(ctx, t))
			Expect(verdict(t.Reference)).To(HaveField("Approved", true))
			reportedBy(t.Reference)
		})

		It("rejects a toll-free verification with a reason", func(ctx SpecContext) {
			skipWithoutRejection()
			t := TollFree(h.RejectDescription)
			supported(TollFreeVerification, reg.SubmitTollFreeVerification(ctx, t))
			Expect(verdict(t.Reference)).To(SatisfyAll(HaveField("Approved", false), HaveField("Reason", Not(BeEmpty()))))
		})

		It("reports a verdict again when the reporter refuses it", func(ctx SpecContext) {
			c := Campaign("Acme Dental sends appointment reminders.")
			h.Reports.Refuse(c.Reference, 1)
			supported(Registration, reg.SubmitCampaign(ctx, c))
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
			Expect(h.Reports.Refused()).To(ContainElement(HaveField("Verdict.Reference", c.Reference)))
		})

		It("withdraws an approved campaign, and a withdrawn or unknown one again without error", func(ctx SpecContext) {
			supported(Withdrawal, reg.WithdrawCampaign(ctx, newReference("cpn")))
			skipWithoutLook()
			c := Campaign("Acme Dental sends appointment reminders to patients who opted in at the front desk.")
			supported(Registration, reg.SubmitCampaign(ctx, c))
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
			Expect(h.Registered(ctx, c.Reference)).To(BeTrue())
			Expect(reg.WithdrawCampaign(ctx, c.Reference)).To(Succeed())
			Expect(h.Registered(ctx, c.Reference)).To(BeFalse(), "the registry holds the campaign no more")
			Expect(reg.WithdrawCampaign(ctx, c.Reference)).To(Succeed())
		})

		It("withdraws a campaign under review, which then gets no verdict", func(ctx SpecContext) {
			supported(Withdrawal, reg.WithdrawCampaign(ctx, newReference("cpn")))
			skipWithoutLook()
			if h.HoldDescription == "" {
				Skip("the harness has no description that the registry keeps in review")
			}
			c := Campaign(h.HoldDescription)
			supported(Registration, reg.SubmitCampaign(ctx, c))
			Eventually(func(ctx SpecContext) bool { return h.Registered(ctx, c.Reference) }).WithContext(ctx).Should(BeTrue())
			Expect(reg.WithdrawCampaign(ctx, c.Reference)).To(Succeed())
			Expect(h.Registered(ctx, c.Reference)).To(BeFalse())
			Consistently(func() []carriers.Verdict { return h.Reports.Verdicts(c.Reference) }).WithTimeout(time.Second).Should(BeEmpty())
		})

		It("withdraws a toll-free verification", func(ctx SpecContext) {
			supported(Withdrawal, reg.WithdrawCampaign(ctx, newReference("tfc")))
			skipWithoutLook()
			t := TollFree("Acme Shop sends shipping notifications to customers who asked for them at checkout.")
			supported(TollFreeVerification, reg.SubmitTollFreeVerification(ctx, t))
			verdict(t.Reference)
			Expect(h.Registered(ctx, t.Reference)).To(BeTrue())
			Expect(reg.WithdrawCampaign(ctx, t.Reference)).To(Succeed())
			Expect(h.Registered(ctx, t.Reference)).To(BeFalse())
		})
	})
}

// Campaign is a 10DLC campaign submission with a fresh reference and a complete brand, as the
// core submits one.
func Campaign(description string) carriers.CampaignSubmission {
	return carriers.CampaignSubmission{
		Reference: newReference("cpn"), AccountID: newReference("acct"), Description: description,
		UseCases:       []string{"account_notification", "customer_care"},
		MessageSamples: []string{"Your appointment is tomorrow at 10am. Reply STOP to opt out.", "Your car is ready for pickup."},
	}
}

// TollFree is a toll-free verification with a fresh reference, as the core submits one.
func TollFree(description string) carriers.TollFreeSubmission {
	return carriers.TollFreeSubmission{
		Reference: newReference("tfc"), AccountID: newReference("acct"), PhoneNumber: "+18335550199",
		Description: description, UseCases: []string{"account_notification"},
		MessageSamples: []string{"Your order has shipped. Reply STOP to opt out."},
	}
}
