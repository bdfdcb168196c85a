package store_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Metadata in a text column", func() {
	It("reads the same from pgx's bytes (ScanBytes) as from database/sql's string or bytes (Scan), errors included", func() {
		for _, src := range []*string{nil, ptr("{}"), ptr(`{"plan":"gold","é":"\u00e9"}`), ptr(" {} "), ptr("{ }"), ptr("null"),
			ptr(""), ptr("[]"), ptr(`{"a":1}`), ptr("{")} {
			var fromString, fromBytes, fromPgx store.Metadata
			var errString, errBytes, errPgx error
			if src == nil {
				errString, errBytes, errPgx = fromString.Scan(nil), fromBytes.Scan(nil), fromPgx.ScanBytes(nil)
			} else {
				errString, errBytes = fromString.Scan(*src), fromBytes.Scan([]byte(*src))
				errPgx = fromPgx.ScanBytes([]byte(*src))
			}
			Expect(fromPgx).To(Equal(fromString), "%v", src)
			Expect(fromBytes).To(Equal(fromString), "%v", src)
			Expect(fromPgx == nil).To(Equal(fromString == nil), "%v", src)
			Expect(errPgx == nil).To(Equal(errString == nil), "%v", src)
			Expect(errBytes == nil).To(Equal(errString == nil), "%v", src)
		}
	})

	It("writes an empty or nil map as {}, as json.Marshal writes an empty map", func() {
		for _, m := range []store.Metadata{nil, {}} {
			Expect(m.Value()).To(Equal("{}"))
		}
		Expect(store.Metadata{"b": "2", "a": "<1>"}.Value()).To(Equal(`{"a":"\u003c1\u003e","b":"2"}`))
	})
})

func ptr(s string) *string { return &s }
