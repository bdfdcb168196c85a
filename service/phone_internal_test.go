package service

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The fast path of NormalizeE164 (isNANP: +1 and ten digits stay as they are) must answer what
// libphonenumber's parse answers. How the parse reads a North American number depends on its
// leading digits only (the national prefix, the possible lengths): every four-digit prefix of
// the national number, with three tails, covers them.
var _ = Describe("NormalizeE164's North American fast path", func() {
	It("answers what the full parse answers for every four-digit prefix", func() {
		for p := range 10000 {
			for _, tail := range []string{"000000", "555012", "999999"} {
				in := fmt.Sprintf("+1%04d%s", p, tail)
				Expect(isNANP(in)).To(BeTrue(), in)
				Expect(normalizeParsed(in)).To(Equal(in), in)
			}
		}
	})

	It("leaves every other form to the parse", func() {
		for _, in := range []string{"+1415555012", "+141555501234", "14155550123", "+1415555012a", "+44207946095", "+1 415555012"} {
			Expect(isNANP(in)).To(BeFalse(), in)
		}
	})
})
