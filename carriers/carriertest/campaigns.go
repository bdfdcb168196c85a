package carriertest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
)

// campaignRegistrySpecs: what the core relies on when it registers campaigns. Verdicts arrive
// through the Reporter, name the submission's reference, come from the adapter's Name, and are
// reported again until the reporter accepts one.
func campaignRegistrySpecs(h *Harness) {
	Describe("CampaignRegistry", func() {
		var reg carriers.CampaignRegistry
		BeforeEach(func() {
			var ok bool
			if reg, ok = h.Carrier.(carriers.CampaignRegistry); !ok {
				Skip(h.Carrier.Name() + " has no campaign registry")
			}
		})

		campaign := func(description string) carriers.CampaignSubmission {
			return carriers.CampaignSubmission{
				Reference: newReference("cpn"), AccountID: newReference("acct"), Description: description,
				UseCases:       []string{"account_notification", "customer_care"},
				MessageSamples: []string{"Your appointment is tomorrow at 10am. Reply STOP to opt out.", "Your car is ready for pickup."},
			}
		}
		tollFree := func(description string) carriers.TollFreeSubmission {
			return carriers.TollFreeSubmission{
				Reference: newReference("tfc"), AccountID: newReference("acct"), PhoneNumber: "+18335550199",
				Description: description, UseCases: []string{"account_notification"},
				MessageSamples: []string{"Your order has shipped. Reply STOP to opt out."},
			}
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

		It("approves a campaign through the reporter, naming the campaign by its reference", func(ctx SpecContext) {
			c := campaign("Acme Dental sends appointment reminders to patients who opted in at the front desk.")
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed())
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
			reportedBy(c.Reference)
		})

		It("rejects a campaign with a reason", func(ctx SpecContext) {
			skipWithoutRejection()
			c := campaign(h.RejectDescription)
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed())
			Expect(verdict(c.Reference)).To(SatisfyAll(HaveField("Approved", false), HaveField("Reason", Not(BeEmpty()))))
		})

		It("reports one verdict for a submission repeated under the same reference", func(ctx SpecContext) {
			c := campaign("Acme Dental sends appointment reminders.")
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed())
			c.Description += " It also answers questions about invoices."
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed(), "a repeated reference amends the submission")
			verdict(c.Reference)
			Consistently(func() []carriers.Verdict { return h.Reports.Verdicts(c.Reference) }).
				WithTimeout(time.Second).Should(HaveLen(1))
		})

		It("imports a campaign by TCR id, or refuses with ErrUnsupported", func(ctx SpecContext) {
			c := carriers.CampaignSubmission{Reference: newReference("cpn"), AccountID: newReference("acct"), TCRID: "CX4ZT1A"}
			err := reg.SubmitCampaign(ctx, c)
			if err != nil {
				Expect(err).To(MatchError(carriers.ErrUnsupported))
				return
			}
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
		})

		It("verifies a toll-free number through the reporter", func(ctx SpecContext) {
			t := tollFree("Acme Shop sends shipping notifications to customers who asked for them at checkout.")
			Expect(reg.SubmitTollFreeVerification(ctx, t)).To(Succeed())
			Expect(verdict(t.Reference)).To(HaveField("Approved", true))
			reportedBy(t.Reference)
		})

		It("rejects a toll-free verification with a reason", func(ctx SpecContext) {
			skipWithoutRejection()
			t := tollFree(h.RejectDescription)
			Expect(reg.SubmitTollFreeVerification(ctx, t)).To(Succeed())
			Expect(verdict(t.Reference)).To(SatisfyAll(HaveField("Approved", false), HaveField("Reason", Not(BeEmpty()))))
		})

		It("reports a verdict again when the reporter refuses it", func(ctx SpecContext) {
			c := campaign("Acme Dental sends appointment reminders.")
			h.Reports.Refuse(c.Reference, 1)
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed())
			Expect(verdict(c.Reference)).To(HaveField("Approved", true))
			Expect(h.Reports.Refused()).To(ContainElement(HaveField("Verdict.Reference", c.Reference)))
		})
	})
}
