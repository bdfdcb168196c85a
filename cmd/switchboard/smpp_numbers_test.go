package main

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("switchboard smpp numbers", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	It("adds, lists and removes the route's numbers", func() {
		var pool []map[string]any
		c.json(&pool, "smpp numbers", "add", "+14155550142", "+18885550100")
		Expect(pool).To(HaveExactElements(
			SatisfyAll(HaveKeyWithValue("number", "+14155550142"), HaveKeyWithValue("type", "local"), HaveKeyWithValue("country", "US"),
				HaveKeyWithValue("taken_at", BeNil())),
			SatisfyAll(HaveKeyWithValue("number", "+18885550100"), HaveKeyWithValue("type", "toll_free"))))
		c.json(&pool, "smpp numbers", "add", "+14155550142", "+16045550100")
		Expect(pool).To(HaveLen(3), "a number listed again is kept once")
		Expect(pool).To(ContainElement(SatisfyAll(HaveKeyWithValue("number", "+16045550100"), HaveKeyWithValue("country", "CA"))))
		c.json(&pool, "smpp numbers", "remove", "+16045550100")
		c.json(&pool, "smpp numbers", "list")
		Expect(pool).To(HaveLen(2))
	})

	DescribeTable("refuses a number that cannot be on the route",
		func(number string) {
			_, err := c.run("smpp numbers", "add", number)
			Expect(err).To(MatchError(ContainSubstring("not a US or Canadian local or toll-free number")))
		},
		Entry("an 800 number, which comes by port-in", "+18005550100"),
		Entry("a UK number", "+442079460000"),
		Entry("a number not in E.164", "(415) 555-0142"),
	)

	It("refuses to remove a number an account holds", func(ctx SpecContext) {
		_, err := c.run("smpp numbers", "add", "+14155550142")
		Expect(err).NotTo(HaveOccurred())
		st := c.openStore()
		DeferCleanup(st.Close)
		Expect(st.SMPP().TakePoolNumber(ctx, "+14155550142", time.Now())).To(BeTrue())
		_, err = c.run("smpp numbers", "remove", "+14155550142")
		Expect(err).To(MatchError(ContainSubstring("an account holds it")))
	})
})
