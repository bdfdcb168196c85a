package kit

import (
	"crypto/rand"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.jetify.com/typeid"
)

var _ = Describe("idOf", func() {
	It("writes what typeid writes for the same prefix and UUID", func() {
		for _, prefix := range []string{"acct", "msg", "req", "with_underscore", ""} {
			for i := range 2000 {
				var u [16]byte
				_, _ = rand.Read(u[:])
				switch i {
				case 0:
					u = [16]byte{}
				case 1:
					u = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
				}
				want, err := typeid.FromUUIDBytesWithPrefix(prefix, u[:])
				Expect(err).NotTo(HaveOccurred())
				Expect(idOf(prefix, u)).To(Equal(want.String()))
			}
		}
	})

	It("writes itself exactly the non-empty prefixes that typeid accepts", func() {
		prefixes := []string{"", "a", "msg", "with_underscore", "_msg", "msg_", "a_b_c", "Msg", "msg1", "mé", "a-b", " msg",
			strings.Repeat("a", 63), strings.Repeat("a", 64)}
		for c := range 256 {
			prefixes = append(prefixes, string(rune(c)), "x"+string(rune(c))+"y", string([]byte{'x', byte(c), 'y'}))
		}
		for _, p := range prefixes {
			_, err := typeid.FromUUIDBytesWithPrefix(p, make([]byte, 16))
			Expect(plainPrefix(p)).To(Equal(p != "" && err == nil), "prefix %q", p)
		}
	})

	It("refuses a prefix typeid refuses, every time", func() {
		for range 2 {
			Expect(func() { idOf("Bad", [16]byte{}) }).To(Panic())
		}
	})
})
