package sim_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
)

var _ = Describe("The simulated inventory", func() {
	first := func(ctx SpecContext, q carriers.NumberQuery) []string {
		found, err := carrier.SearchNumbers(ctx, q)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		out := make([]string, len(found))
		for i, a := range found {
			out[i] = a.Number + " " + a.Country
		}
		return out
	}

	DescribeTable("offers the documented numbers, in order",
		func(ctx SpecContext, q carriers.NumberQuery, want []string) {
			q.Limit = len(want)
			Expect(first(ctx, q)).To(Equal(want))
		},
		Entry("local numbers of an area code: +1 AAA 555 01XX", carriers.NumberQuery{Type: "local", AreaCode: "415"},
			[]string{"+14155550100 US", "+14155550101 US", "+14155550102 US"}),
		Entry("the US default area codes, first to last", carriers.NumberQuery{Country: "US", Type: "local"},
			append(numbersOf("415", "US", 100), "+12125550100 US")),
		Entry("a Canadian area code", carriers.NumberQuery{Country: "CA", Type: "local", AreaCode: "604"},
			[]string{"+16045550100 CA", "+16045550101 CA"}),
		Entry("Canada's default area codes", carriers.NumberQuery{Country: "CA", Type: "local"}, []string{"+14165550100 CA"}),
		Entry("toll-free numbers from 833 on", carriers.NumberQuery{Type: "toll_free"}, []string{"+18335550100 US", "+18335550101 US"}),
		Entry("toll-free numbers of a prefix", carriers.NumberQuery{Type: "toll_free", AreaCode: "888"}, []string{"+18885550100 US"}),
		Entry("toll-free numbers in Canada", carriers.NumberQuery{Country: "CA", Type: "toll_free", AreaCode: "844"}, []string{"+18445550100 CA"}),
	)

	DescribeTable("offers nothing",
		func(ctx SpecContext, q carriers.NumberQuery) {
			Expect(first(ctx, q)).To(BeEmpty())
		},
		Entry("for a Canadian area code in the US", carriers.NumberQuery{Country: "US", Type: "local", AreaCode: "416"}),
		Entry("for a US area code in Canada", carriers.NumberQuery{Country: "CA", Type: "local", AreaCode: "415"}),
		Entry("for an unassigned area code", carriers.NumberQuery{Type: "local", AreaCode: "999"}),
		Entry("for a toll-free prefix as a local area code", carriers.NumberQuery{Type: "local", AreaCode: "833"}),
		Entry("for a local area code as a toll-free prefix", carriers.NumberQuery{Type: "toll_free", AreaCode: "415"}),
		Entry("outside the US and Canada", carriers.NumberQuery{Country: "GB", Type: "local"}),
	)

	DescribeTable("offers local numbers near a place, nearest area code first",
		func(ctx SpecContext, country string, lat, lon float64, want []string) {
			q := carriers.NumberQuery{Country: country, Type: "local", Near: &carriers.Location{Latitude: lat, Longitude: lon}, Limit: 101}
			found := first(ctx, q)
			Expect(found[0]).To(Equal(want[0]))
			Expect(found[100]).To(Equal(want[1]), "the next area code follows the first one's 100 numbers")
		},
		Entry("Oakland: 510, then San Francisco's 415", "US", 37.80, -122.27, []string{"+15105550100 US", "+14155550100 US"}),
		Entry("Brooklyn: Manhattan's 212, then Jersey City's 201", "US", 40.68, -73.94, []string{"+12125550100 US", "+12015550100 US"}),
		Entry("Toronto without a country: 416 in Canada, then Buffalo's 716", "", 43.70, -79.42, []string{"+14165550100 CA", "+17165550100 US"}),
		Entry("Toronto in Canada: 416, then London's 519", "CA", 43.70, -79.42, []string{"+14165550100 CA", "+15195550100 CA"}),
		Entry("Toronto in the US: Buffalo's 716, then Cleveland's 216", "US", 43.70, -79.42, []string{"+17165550100 US", "+12165550100 US"}),
	)

	It("locates only area codes of the country the numbering plan gives them", func() {
		for code, want := range sim.AreaCodeCountries() {
			Expect(sim.AreaCodeCountry(code)).To(Equal(want), "area code %s", code)
		}
	})

	It("skips provisioned numbers, and caps an unlimited search at 25", func(ctx SpecContext) {
		Expect(carrier.ProvisionNumber(ctx, "+15125550100")).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(carrier.ReleaseNumber(ctx, "+15125550100")).To(Succeed()) })
		found := first(ctx, carriers.NumberQuery{Type: "local", AreaCode: "512"})
		Expect(found).To(HaveLen(25))
		Expect(found[0]).To(Equal("+15125550101 US"))
	})

	It("provisions only numbers of the scheme", func(ctx SpecContext) {
		Expect(carrier.ProvisionNumber(ctx, "+19995550100")).To(MatchError(carriers.ErrNumberUnavailable), "unassigned area code")
		Expect(carrier.ProvisionNumber(ctx, "+18005550199")).To(MatchError(carriers.ErrPortInOnly))
		Expect(carrier.ProvisionNumber(ctx, "+18335550000")).To(MatchError(carriers.ErrNumberUnavailable), "the demo number")
	})
})

var _ = Describe("The simulated registry", func() {
	It("rejects an import whose TCR id contains the reject word", func(ctx SpecContext) {
		ref := fmt.Sprintf("cpn_%026d", 1)
		Expect(carrier.SubmitCampaign(ctx, carriers.CampaignSubmission{Reference: ref, TCRID: "C" + sim.RejectWord})).To(Succeed())
		Eventually(func() []carriers.Verdict { return reports.Verdicts(ref) }).
			Should(ConsistOf(SatisfyAll(HaveField("Approved", false), HaveField("Reason", ContainSubstring(sim.RejectWord)))))
	})

	It("reviews a decided submission again when it is submitted again", func(ctx SpecContext) {
		ref := fmt.Sprintf("tfc_%026d", 2)
		sub := carriers.TollFreeSubmission{Reference: ref, Description: "Shipping updates. " + sim.RejectWord}
		Expect(carrier.SubmitTollFreeVerification(ctx, sub)).To(Succeed())
		Eventually(func() []carriers.Verdict { return reports.Verdicts(ref) }).Should(HaveLen(1))
		sub.Description = "Shipping updates for customers who asked for them."
		Expect(carrier.SubmitTollFreeVerification(ctx, sub)).To(Succeed())
		Eventually(func() []carriers.Verdict { return reports.Verdicts(ref) }).
			Should(HaveExactElements(HaveField("Approved", false), HaveField("Approved", true)))
	})

	It("refuses a submission without a reference", func(ctx SpecContext) {
		Expect(carrier.SubmitCampaign(ctx, carriers.CampaignSubmission{Description: "x"})).NotTo(Succeed())
	})
})

// numbersOf lists the first n numbers of an area code as the search shows them.
func numbersOf(area, country string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("+1%s55501%02d %s", area, i, country)
	}
	return out
}
