package server_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Accounts", func() {
	var t *tenant
	BeforeEach(func() { t = newTenant() })

	It("creates an account with 201 and returns it", func() {
		r := t.post("/accounts", map[string]any{"name": "Acme Dental", "time_zone": "America/New_York"})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		a := r.JSON()
		Expect(a["id"]).To(MatchRegexp(`^acct_[0-7][0-9a-hjkmnp-tv-z]{25}$`))
		Expect(a).To(HaveKeyWithValue("name", "Acme Dental"))
		Expect(a).To(HaveKeyWithValue("brand_name", "Acme Dental"))
		Expect(a).To(HaveKeyWithValue("time_zone", "America/New_York"))
	})
})
