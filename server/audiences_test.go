package server_test

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// createAudience creates an audience and returns its id.
func (t *tenant) createAudience(account, name string) string {
	r := t.post("/accounts/"+account+"/audiences", map[string]any{"name": name})
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()["id"].(string)
}

// addMember adds a contact to an audience and expects 201.
func (t *tenant) addMember(audience, contact string) {
	r := t.post("/audiences/"+audience+"/contacts", map[string]any{"id": contact})
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
}

func memberIDs(r *response) []string {
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	r.Into(&page)
	out := []string{}
	for _, c := range page.Data {
		out = append(out, c.ID)
	}
	return out
}

var _ = Describe("Audiences", func() {
	var (
		t    *tenant
		acct string
	)
	BeforeEach(func() {
		t = newTenant()
		acct = t.createAccount("Acme Dental")
	})

	It("creates, retrieves and lists an account's audiences, newest first", func() {
		r := t.post("/accounts/"+acct+"/audiences", map[string]any{"name": "VIP customers"})
		Expect(r).To(HaveStatus(http.StatusCreated))
		a := r.JSON()
		Expect(a).To(SatisfyAll(HaveKeyWithValue("id", MatchRegexp(`^aud_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
			HaveKeyWithValue("name", "VIP customers"), HaveKeyWithValue("created_at", Not(BeEmpty()))))
		Expect(t.get("/audiences/" + a["id"].(string)).JSON()).To(Equal(a))
		second := t.createAudience(acct, "Lapsed")
		Expect(memberIDs(t.get("/accounts/" + acct + "/audiences"))).To(Equal([]string{second, a["id"].(string)}))
	})

	DescribeTable("refuses a name outside 1..255 characters with 422 validation_error",
		func(body map[string]any) {
			Expect(t.post("/accounts/"+acct+"/audiences", body)).To(HaveFieldError("name"))
		},
		Entry("empty", map[string]any{"name": ""}),
		Entry("256 characters", map[string]any{"name": strings.Repeat("a", 256)}),
		Entry("missing", map[string]any{}),
		Entry("not a string", map[string]any{"name": 7}),
	)

	It("accepts a name of 255 characters, counted in characters", func() {
		Expect(t.post("/accounts/"+acct+"/audiences", map[string]any{"name": strings.Repeat("é", 255)})).To(HaveStatus(http.StatusCreated))
	})

	It("answers 404 for an account, an audience or a member list of another project", func() {
		other := newTenant()
		theirs := other.createAccount("Theirs")
		aud := other.createAudience(theirs, "Theirs")
		Expect(t.post("/accounts/"+theirs+"/audiences", map[string]any{"name": "x"})).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/accounts/" + theirs + "/audiences")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/audiences/" + aud)).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/audiences/" + aud + "/contacts")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/audiences/" + store.NewID("aud"))).To(HaveError(http.StatusNotFound, "not_found"))
	})

	Describe("members", func() {
		var aud string
		BeforeEach(func() { aud = t.createAudience(acct, "VIP") })

		It("adds contacts (twice is harmless), lists them most recently added first, and removes one", func() {
			mia := t.createContactIn(acct, map[string]any{"phone_number": "+14155550101", "first_name": "Mia"})
			dom := t.createContactIn(acct, map[string]any{"phone_number": "+14155550102"})
			r := t.post("/audiences/"+aud+"/contacts", map[string]any{"id": mia["id"]})
			Expect(r).To(HaveStatus(http.StatusCreated))
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("id", mia["id"]), HaveKeyWithValue("first_name", "Mia")))
			t.addMember(aud, dom["id"].(string))
			t.addMember(aud, mia["id"].(string))
			Expect(memberIDs(t.get("/audiences/" + aud + "/contacts"))).To(Equal([]string{dom["id"].(string), mia["id"].(string)}))

			first := t.get("/audiences/" + aud + "/contacts?limit=1").JSON()
			Expect(first["data"]).To(HaveLen(1))
			next := first["pagination"].(map[string]any)["next_cursor"].(string)
			Expect(memberIDs(t.get("/audiences/" + aud + "/contacts?limit=1&after=" + next))).To(Equal([]string{mia["id"].(string)}))

			r = t.delete("/audiences/" + aud + "/contacts/" + dom["id"].(string))
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(HaveKeyWithValue("id", dom["id"]))
			Expect(memberIDs(t.get("/audiences/" + aud + "/contacts"))).To(Equal([]string{mia["id"].(string)}))
			Expect(t.get("/contacts/"+dom["id"].(string))).To(HaveStatus(http.StatusOK), "the contact itself stays")
			Expect(t.delete("/audiences/"+aud+"/contacts/"+dom["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"), "no longer a member")
		})

		DescribeTable("refuses a contact that is not the audience account's with 422 validation_error, adding nothing",
			func(contact func() string) {
				Expect(t.post("/audiences/"+aud+"/contacts", map[string]any{"id": contact()})).To(HaveFieldError("id"))
				Expect(memberIDs(t.get("/audiences/" + aud + "/contacts"))).To(BeEmpty())
			},
			Entry("a sibling account's contact", func() string {
				return t.createContactIn(t.createAccount("Sibling"), map[string]any{"phone_number": "+14155550103"})["id"].(string)
			}),
			Entry("another project's contact", func() string {
				o := newTenant()
				return o.createContactIn(o.createAccount("Theirs"), map[string]any{"phone_number": "+14155550104"})["id"].(string)
			}),
			Entry("a contact that does not exist", func() string { return store.NewID("ctc") }),
		)

		It("answers 404 when adding to or removing from another project's audience", func() {
			other := newTenant()
			theirs := other.createAudience(other.createAccount("Theirs"), "Theirs")
			c := t.createContactIn(acct, map[string]any{"phone_number": "+14155550105"})
			Expect(t.post("/audiences/"+theirs+"/contacts", map[string]any{"id": c["id"]})).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.delete("/audiences/" + theirs + "/contacts/" + c["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})
})
