package carriertest

import (
	"sync"
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
			// The repeat must reach the review pending: one that comes after the verdict is an
			// amendment of a decided submission, which a registry may review again.
			resume := func() {}
			if h.PauseReviews != nil {
				resume = sync.OnceFunc(h.PauseReviews()) // resumed below, or on a failure before
				DeferCleanup(func() { resume() })
			}
			c := Campaign("Acme Dental sends appointment reminders.")
			supported(Registration, reg.SubmitCampaign(ctx, c))
			c.Description += " It also answers questions about invoices."
			Expect(reg.SubmitCampaign(ctx, c)).To(Succeed(), "a repeated reference amends the submission")
			resume()
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
			t := TollFree(h, "Acme Shop sends shipping notifications to customers who asked for them at checkout.")
			withdrawAfter(reg, t.Reference)
			supported(TollFreeVerification, reg.SubmitTollFreeVerification(ctx, t))
			Expect(verdict(t.Reference)).To(HaveField("Approved", true))
			reportedBy(t.Reference)
		})

		It("rejects a toll-free verification with a reason", func(ctx SpecContext) {
			skipWithoutRejection()
			t := TollFree(h, h.RejectDescription)
			withdrawAfter(reg, t.Reference)
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
			t := TollFree(h, "Acme Shop sends shipping notifications to customers who asked for them at checkout.")
			withdrawAfter(reg, t.Reference)
			supported(TollFreeVerification, reg.SubmitTollFreeVerification(ctx, t))
			verdict(t.Reference)
			Expect(h.Registered(ctx, t.Reference)).To(BeTrue())
			Expect(reg.WithdrawCampaign(ctx, t.Reference)).To(Succeed())
			Expect(h.Registered(ctx, t.Reference)).To(BeFalse())
		})
	})
}

// withdrawAfter withdraws a toll-free verification when the spec ends, so that the next spec can
// verify the same number again (a carrier keeps one verification per number).
func withdrawAfter(reg carriers.CampaignRegistry, reference string) {
	DeferCleanup(func(ctx SpecContext) {
		if err := reg.WithdrawCampaign(ctx, reference); err != nil {
			Expect(err).To(MatchError(carriers.ErrUnsupported))
		}
	})
}

// Brand is a complete brand, as an account whose organization is filled in gives it.
func Brand() carriers.Brand {
	return carriers.Brand{
		Name: "Acme Dental", RegisteredName: "Acme Dental LLC", Type: "llc", Industry: "healthcare",
		Website: "https://acmedental.example", Email: "compliance@acmedental.example", Identifier: "12-3456789",
		IdentifierType: "ein", Country: "US", RegionsOfOperation: []string{"usa_and_canada"},
		Address: carriers.BrandAddress{Name: "Acme Dental LLC", Line1: "1 Market St", Locality: "San Francisco", Region: "CA",
			PostalCode: "94105", Country: "US"},
		Contact: carriers.BrandContact{FirstName: "Ada", LastName: "Lopez", Email: "ada@acmedental.example",
			PhoneNumber: "+14155550142", Title: "ceo"},
	}
}

// Campaign is a 10DLC campaign submission with a fresh reference and a complete brand, as the
// core submits one.
func Campaign(description string) carriers.CampaignSubmission {
	return carriers.CampaignSubmission{
		Reference: newReference("cpn"), AccountID: newReference("acct"), Brand: Brand(), Description: description,
		UseCases:       []string{"account_notification", "customer_care"},
		MessageSamples: []string{"Your appointment is tomorrow at 10am. Reply STOP to opt out.", "Your car is ready for pickup."},
		ConsentFlow:    "Patients opt in by checking a box on the intake form at https://acmedental.example/intake.",
		Includes:       []string{"links"}, PrivacyPolicyURL: "https://acmedental.example/privacy", Volume: "low",
		OptInMessage:  "Acme Dental: You are subscribed again. Reply HELP for help, STOP to unsubscribe.",
		OptOutMessage: "Acme Dental: You are unsubscribed and will receive no more messages. Reply START to resubscribe.",
		HelpMessage:   "Acme Dental: Reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply.",
	}
}

// TollFree is a toll-free verification with a fresh reference, as the core submits one, of the
// harness's toll-free number.
func TollFree(h *Harness, description string) carriers.TollFreeSubmission {
	number := h.TollFreeNumber
	if number == "" {
		number = "+18335550199"
	}
	return carriers.TollFreeSubmission{
		Reference: newReference("tfc"), AccountID: newReference("acct"), Brand: Brand(), PhoneNumber: number,
		Description: description, UseCases: []string{"account_notification"},
		MessageSamples:   []string{"Your order has shipped. Reply STOP to opt out."},
		PrivacyPolicyURL: "https://acmedental.example/privacy",
		OptInMessage:     "Acme Dental: You are subscribed again. Reply HELP for help, STOP to unsubscribe.",
		HelpMessage:      "Acme Dental: Reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply.",
	}
}
