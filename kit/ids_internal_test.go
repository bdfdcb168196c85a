package kit

import (
	"crypto/rand"

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

	It("refuses a prefix typeid refuses, every time", func() {
		for range 2 {
			Expect(func() { idOf("Bad", [16]byte{}) }).To(Panic())
		}
	})
})
