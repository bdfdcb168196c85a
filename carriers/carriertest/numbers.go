package carriertest

import (
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
)

// tollFreeNumber is a toll-free number in a prefix that can be bought (833 to 888, never 800).
var tollFreeNumber = regexp.MustCompile(`^\+18(33|44|55|66|77|88)\d{7}$`)

// numberInventorySpecs: what the core relies on when it searches, buys and releases numbers.
func numberInventorySpecs(h *Harness) {
	Describe("NumberInventory", func() {
		var inv carriers.NumberInventory
		BeforeEach(func() {
			var ok bool
			if inv, ok = h.Carrier.(carriers.NumberInventory); !ok {
				Skip(h.Carrier.Name() + " has no number inventory")
			}
		})

		// search returns what a query offers, expecting no error.
		search := func(ctx SpecContext, q carriers.NumberQuery) []carriers.AvailableNumber {
			found, err := inv.SearchNumbers(ctx, q)
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
			return found
		}
		numbers := func(found []carriers.AvailableNumber) []string {
			out := make([]string, len(found))
			for i, a := range found {
				out[i] = a.Number
			}
			return out
		}
		local := func() carriers.NumberQuery {
			return carriers.NumberQuery{Country: h.Inventory.Country, Type: "local", AreaCode: h.Inventory.AreaCode, Limit: 5}
		}
		// provision takes a number for the rest of the spec.
		provision := func(ctx SpecContext, number string) {
			ExpectWithOffset(1, inv.ProvisionNumber(ctx, number)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(inv.ReleaseNumber(ctx, number)).To(Succeed()) })
		}

		It("offers local numbers of the area code and country asked for, in E.164, at most limit", func(ctx SpecContext) {
			found := search(ctx, local())
			Expect(found).NotTo(BeEmpty())
			Expect(len(found)).To(BeNumerically("<=", 5))
			Expect(numbers(found)).To(HaveEach(MatchRegexp(`^\+1` + h.Inventory.AreaCode + `\d{7}$`)))
			Expect(found).To(HaveEach(SatisfyAll(HaveField("Type", "local"), HaveField("Country", h.Inventory.Country))))
			Expect(numbers(found)).To(HaveLen(len(uniq(numbers(found)))), "no number is offered twice")
		})

		It("offers toll-free numbers only in the 833, 844, 855, 866, 877 and 888 prefixes", func(ctx SpecContext) {
			found := search(ctx, carriers.NumberQuery{Country: "US", Type: "toll_free", Limit: 50})
			Expect(found).NotTo(BeEmpty())
			Expect(numbers(found)).To(HaveEach(MatchRegexp(tollFreeNumber.String())))
			Expect(found).To(HaveEach(HaveField("Type", "toll_free")))

			prefixed := search(ctx, carriers.NumberQuery{Country: "US", Type: "toll_free", AreaCode: h.Inventory.TollFreePrefix, Limit: 5})
			Expect(prefixed).NotTo(BeEmpty())
			Expect(numbers(prefixed)).To(HaveEach(HavePrefix("+1" + h.Inventory.TollFreePrefix)))
		})

		It("refuses the 800 prefix as port-in only, in a search and in a provisioning", func(ctx SpecContext) {
			_, err := inv.SearchNumbers(ctx, carriers.NumberQuery{Country: "US", Type: "toll_free", AreaCode: "800"})
			Expect(err).To(MatchError(carriers.ErrPortInOnly))
			Expect(inv.ProvisionNumber(ctx, "+18005550100")).To(MatchError(carriers.ErrPortInOnly))
		})

		It("provisions an offered number once: it is offered no more, and taking it again is ErrNumberUnavailable", func(ctx SpecContext) {
			number := search(ctx, local())[0].Number
			provision(ctx, number)
			Expect(numbers(search(ctx, local()))).NotTo(ContainElement(number))
			Expect(inv.ProvisionNumber(ctx, number)).To(MatchError(carriers.ErrNumberUnavailable))
		})

		It("offers a released number again; releasing twice, or a number never held, is no error", func(ctx SpecContext) {
			number := search(ctx, local())[0].Number
			Expect(inv.ProvisionNumber(ctx, number)).To(Succeed())
			Expect(inv.ReleaseNumber(ctx, number)).To(Succeed())
			Expect(numbers(search(ctx, local()))).To(ContainElement(number))
			Expect(inv.ReleaseNumber(ctx, number)).To(Succeed())
			Expect(inv.ProvisionNumber(ctx, number)).To(Succeed(), "a released number can be taken again")
			Expect(inv.ReleaseNumber(ctx, number)).To(Succeed())
		})

		It("refuses a number outside its inventory with ErrNumberUnavailable", func(ctx SpecContext) {
			if h.Inventory.Unknown == "" {
				Skip("the harness names no number outside the inventory")
			}
			Expect(inv.ProvisionNumber(ctx, h.Inventory.Unknown)).To(MatchError(carriers.ErrNumberUnavailable))
		})
	})
}

func uniq(in []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range in {
		out[s] = true
	}
	return out
}
