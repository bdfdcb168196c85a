package kit_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.jetify.com/typeid"

	"github.com/switchboard/switchboard/kit"
)

func TestKit(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Kit Suite")
}

var _ = Describe("Identifiers", func() {
	It("mints TypeIDs whose text order is their creation order, even many per millisecond", func() {
		prev := kit.NewID("acct")
		for range 100000 {
			id := kit.NewID("acct")
			Expect(id > prev).To(BeTrue(), "%s after %s", id, prev)
			prev = id
		}
		u, err := typeid.FromString(prev)
		Expect(err).NotTo(HaveOccurred())
		Expect(u.Prefix()).To(Equal("acct"))
		Expect(u.UUID()[14:15]).To(Equal("7"), "a UUIDv7: %s", u.UUID())
	})
})
