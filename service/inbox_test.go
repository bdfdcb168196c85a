package service_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service"
)

var _ = Describe("Embedding origins", func() {
	DescribeTable("are normalized, and only web origins are taken",
		func(in, want string) {
			got, err := service.NormalizeOrigin(in)
			if want == "" {
				Expect(err).To(HaveOccurred(), "%q should be refused", in)
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		},
		Entry("https", "https://app.acme.com", "https://app.acme.com"),
		Entry("case and default port", "HTTPS://App.Acme.com:443/", "https://app.acme.com"),
		Entry("another port", "https://app.acme.com:8443", "https://app.acme.com:8443"),
		Entry("http on localhost", "http://localhost:5173", "http://localhost:5173"),
		Entry("http on 127.0.0.1", "http://127.0.0.1:3000", "http://127.0.0.1:3000"),
		Entry("IPv6 loopback", "http://[::1]:3000", "http://[::1]:3000"),
		Entry("http elsewhere", "http://app.acme.com", ""),
		Entry("a path", "https://app.acme.com/inbox", ""),
		Entry("a query", "https://app.acme.com?x=1", ""),
		Entry("credentials", "https://user:pw@app.acme.com", ""),
		Entry("a wildcard", "https://*.acme.com", ""),
		Entry("a CSP keyword", "'self'", ""),
		Entry("a header injection", "https://a.com; script-src *", ""),
		Entry("no host", "https://", ""),
		Entry("another scheme", "javascript:alert(1)", ""),
	)
})
