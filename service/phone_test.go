package service_test

import (
	"regexp"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service"
)

var _ = Describe("NormalizeE164", func() {
	DescribeTable("normalises what people and carriers write",
		func(in, want string) {
			Expect(service.NormalizeE164(in)).To(Equal(want))
		},
		Entry("E.164 as is", "+14155550123", "+14155550123"),
		Entry("punctuation", "+1 (415) 555-0123", "+14155550123"),
		Entry("a national North American number", "415-555-0123", "+14155550123"),
		Entry("1 and the national number", "1 415 555 0123", "+14155550123"),
		Entry("surrounding blanks", "  +14155550123 ", "+14155550123"),
		Entry("a UK number", "+44 20 7946 0958", "+442079460958"),
		Entry("a French number", "+33 1 23 45 67 89", "+33123456789"),
	)

	DescribeTable("refuses what is not a possible number",
		func(in string) {
			_, err := service.NormalizeE164(in)
			Expect(err).To(MatchError(service.ErrNotE164))
		},
		Entry("empty", ""),
		Entry("letters", "call me"),
		Entry("too short", "+1415"),
		Entry("too long", "+1415555012345678"),
		Entry("a short code", "88202"),
	)
})

var e164Pattern = regexp.MustCompile(`^\+[1-9]\d{6,14}$`)

// FuzzE164 checks that NormalizeE164 never panics, only returns E.164, and is idempotent.
func FuzzE164(f *testing.F) {
	for _, s := range []string{"+14155550123", "+1 (415) 555-0123", "4155550123", "+442079460958", "+", "++1", "0", "+999999999999999", "tel:+1-415"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := service.NormalizeE164(in)
		if err != nil {
			return
		}
		if !e164Pattern.MatchString(out) {
			t.Fatalf("%q normalised to %q, not E.164", in, out)
		}
		again, err := service.NormalizeE164(out)
		if err != nil || again != out {
			t.Fatalf("%q → %q → %q, %v: not idempotent", in, out, again, err)
		}
	})
}
