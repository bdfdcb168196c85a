package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// contactIDPattern is a contact TypeID.
const contactIDPattern = `^ctc_[0-7][0-9a-hjkmnp-tv-z]{25}$`

// createContactIn creates a contact in an account and returns it as the API answered it.
func (t *tenant) createContactIn(accountID string, body map[string]any) map[string]any {
	r := t.post("/accounts/"+accountID+"/contacts", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

// HaveConflict matches a 409 conflict that tells clients not to retry.
func HaveConflict() OmegaMatcher {
	return SatisfyAll(
		HaveError(http.StatusConflict, "conflict"),
		WithTransform(func(r *response) string { return r.Header.Get("X-Should-Retry") }, Equal("false")),
	)
}

var _ = Describe("Contacts", func() {
	var (
		t    *tenant
		acct string
	)
	BeforeEach(func() {
		t = newTenant()
		acct = t.createAccount("Acme Dental")
	})

	Describe("POST /accounts/{account_id}/contacts", func() {
		It("creates a contact with every field and answers 201 with it", func() {
			before := time.Now().Add(-time.Second)
			r := t.post("/accounts/"+acct+"/contacts", map[string]any{
				"phone_number": "+14155550123", "email": "mia@example.com",
				"first_name": "Mia", "last_name": "Toretto", "metadata": map[string]any{"crm_id": "42"},
			})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			c := r.JSON()
			Expect(c).To(SatisfyAll(
				HaveKeyWithValue("id", MatchRegexp(contactIDPattern)),
				HaveKeyWithValue("phone_number", "+14155550123"),
				HaveKeyWithValue("email", "mia@example.com"),
				HaveKeyWithValue("first_name", "Mia"),
				HaveKeyWithValue("last_name", "Toretto"),
				HaveKeyWithValue("metadata", Equal(map[string]any{"crm_id": "42"})),
				HaveKeyWithValue("outbound_disabled", false),
				HaveKeyWithValue("opted_out", false),
			))
			created, err := time.Parse(time.RFC3339Nano, c["created_at"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(created).To(BeTemporally(">=", before))
			Expect(created).To(BeTemporally("<=", time.Now().Add(time.Second)))
		})

		It("needs only phone_number: the names and email are absent (never null, as Surge's types have them), metadata is empty, and messaging is allowed", func() {
			c := t.createContactIn(acct, map[string]any{"phone_number": "+14155550124"})
			Expect(c).To(Equal(map[string]any{
				"id": c["id"], "phone_number": "+14155550124",
				"metadata": map[string]any{}, "outbound_disabled": false, "opted_out": false, "created_at": c["created_at"],
			}))
			Expect(c["id"]).To(MatchRegexp(contactIDPattern))
		})

		It("accepts phone numbers at the bounds of E.164 (7 and 15 digits)", func() {
			t.createContactIn(acct, map[string]any{"phone_number": "+1234567"})
			t.createContactIn(acct, map[string]any{"phone_number": "+123456789012345"})
		})

		It("refuses a second contact with the same phone number in the account with 409, not to be retried", func() {
			first := t.createContactIn(acct, map[string]any{"phone_number": "+14155550123", "first_name": "Mia"})
			r := t.post("/accounts/"+acct+"/contacts", map[string]any{"phone_number": "+14155550123", "first_name": "Letty"})
			Expect(r).To(HaveConflict(), r.String())
			Expect(idsOf(t.get("/accounts/" + acct + "/contacts"))).To(Equal([]string{first["id"].(string)}))
			Expect(t.get("/contacts/"+first["id"].(string)).JSON()).To(Equal(first), "the first contact is untouched")
		})

		It("allows the same phone number in two accounts of the project", func() {
			sibling := t.createAccount("Sibling")
			a := t.createContactIn(acct, map[string]any{"phone_number": "+14155550123"})
			b := t.createContactIn(sibling, map[string]any{"phone_number": "+14155550123"})
			Expect(a["id"]).NotTo(Equal(b["id"]))
		})

		It("allows the same phone number in accounts of two projects", func() {
			other := newTenant()
			t.createContactIn(acct, map[string]any{"phone_number": "+14155550123"})
			other.createContactIn(other.createAccount("Theirs"), map[string]any{"phone_number": "+14155550123"})
		})

		It("returns 404 for an account that does not exist", func() {
			r := t.post("/accounts/acct_01jtp4dsdq6de56aa0tfm2e5b3/contacts", map[string]any{"phone_number": "+14155550123"})
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("returns 404 for an account of another project and creates nothing there", func() {
			other := newTenant()
			theirs := other.createAccount("Theirs")
			r := t.post("/accounts/"+theirs+"/contacts", map[string]any{"phone_number": "+14155550123"})
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(idsOf(other.get("/accounts/" + theirs + "/contacts"))).To(BeEmpty())
		})

		It("answers 400 invalid_json to a body that is not JSON", func() {
			Expect(t.post("/accounts/"+acct+"/contacts", `{"phone_number": +14155550123}`)).To(HaveError(http.StatusBadRequest, "invalid_json"))
		})

		DescribeTable("refuses an invalid body with 422 naming the field",
			func(body map[string]any, field string) {
				r := t.post("/accounts/"+acct+"/contacts", body)
				Expect(r).To(HaveFieldError(field), r.String())
				Expect(idsOf(t.get("/accounts/"+acct+"/contacts"))).To(BeEmpty(), "nothing was created")
			},
			Entry("phone_number missing", map[string]any{"first_name": "Mia"}, "phone_number"),
			Entry("phone_number without +", map[string]any{"phone_number": "14155550123"}, "phone_number"),
			Entry("phone_number too short", map[string]any{"phone_number": "12345"}, "phone_number"),
			Entry("phone_number with 6 digits", map[string]any{"phone_number": "+123456"}, "phone_number"),
			Entry("phone_number with a leading 0", map[string]any{"phone_number": "+0123456"}, "phone_number"),
			Entry("phone_number with spaces", map[string]any{"phone_number": "+1 555 555 0100"}, "phone_number"),
			Entry("phone_number with punctuation", map[string]any{"phone_number": "+1(415)555-0123"}, "phone_number"),
			Entry("phone_number too long (16 digits)", map[string]any{"phone_number": "+1234567890123456"}, "phone_number"),
			Entry("phone_number a short code", map[string]any{"phone_number": "12345"}, "phone_number"),
			Entry("phone_number not a string", map[string]any{"phone_number": 14155550123}, "phone_number"),
			Entry("email invalid", map[string]any{"phone_number": "+14155550123", "email": "mia-at-example.com"}, "email"),
			Entry("email not a string", map[string]any{"phone_number": "+14155550123", "email": 7}, "email"),
			Entry("first_name not a string", map[string]any{"phone_number": "+14155550123", "first_name": 7}, "first_name"),
			Entry("metadata with 51 keys", map[string]any{"phone_number": "+14155550123", "metadata": metadataWithKeys(51)}, "metadata"),
			Entry("metadata value over 500 characters", map[string]any{"phone_number": "+14155550123", "metadata": map[string]any{"notes": strings.Repeat("z", 501)}}, "metadata.notes"),
			Entry("metadata value not a string", map[string]any{"phone_number": "+14155550123", "metadata": map[string]any{"vip": true}}, "metadata.vip"),
			Entry("unknown field", map[string]any{"phone_number": "+14155550123", "company": "Acme"}, "company"),
			Entry("opted_out is not writable", map[string]any{"phone_number": "+14155550123", "opted_out": true}, "opted_out"),
		)
	})

	Describe("GET /accounts/{account_id}/contacts", func() {
		It("lists an account's contacts newest first, in pages of limit", func() {
			var ids []string // oldest first
			for i := range 5 {
				ids = append(ids, t.createContactIn(acct, map[string]any{"phone_number": fmt.Sprintf("+1415555010%d", i)})["id"].(string))
			}
			base := "/accounts/" + acct + "/contacts?limit=2"

			first := t.get(base)
			Expect(first).To(HaveStatus(http.StatusOK), first.String())
			Expect(idsOf(first)).To(Equal([]string{ids[4], ids[3]}))
			next, prev := cursorsOf(first)
			Expect(prev).To(BeEmpty())
			Expect(next).NotTo(BeEmpty())

			second := t.get(base + "&after=" + next)
			Expect(idsOf(second)).To(Equal([]string{ids[2], ids[1]}))
			next, _ = cursorsOf(second)

			third := t.get(base + "&after=" + next)
			Expect(idsOf(third)).To(Equal([]string{ids[0]}))
			next, prev = cursorsOf(third)
			Expect(next).To(BeEmpty())

			Expect(idsOf(t.get(base + "&before=" + prev))).To(Equal([]string{ids[2], ids[1]}))
		})

		It("returns full contacts and only the account's own", func() {
			c := t.createContactIn(acct, map[string]any{"phone_number": "+14155550123", "email": "mia@example.com",
				"first_name": "Mia", "last_name": "Toretto", "metadata": map[string]any{"crm_id": "42"}})
			sibling := t.createAccount("Sibling")
			t.createContactIn(sibling, map[string]any{"phone_number": "+14155550199"})
			var page struct {
				Data []map[string]any `json:"data"`
			}
			t.get("/accounts/" + acct + "/contacts").Into(&page)
			Expect(page.Data).To(Equal([]map[string]any{c}))
		})

		It("returns 404 for an account of another project", func() {
			other := newTenant()
			theirs := other.createAccount("Theirs")
			other.createContactIn(theirs, map[string]any{"phone_number": "+14155550123"})
			Expect(t.get("/accounts/" + theirs + "/contacts")).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("GET /contacts/{id}", func() {
		It("retrieves a contact, including outbound_disabled and metadata", func() {
			c := t.createContactIn(acct, map[string]any{"phone_number": "+14155550123", "first_name": "Mia",
				"metadata": map[string]any{"crm_id": "42"}})
			r := t.get("/contacts/" + c["id"].(string))
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(Equal(c))
			Expect(r.JSON()).To(HaveKeyWithValue("outbound_disabled", false))
		})

		It("returns 404 for a contact that does not exist", func() {
			Expect(t.get("/contacts/ctc_01jfz0d5zty2zdw0r1ggq7j0ns")).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("refuses a malformed contact id with 422 naming it", func() {
			Expect(t.get("/contacts/usr_01jg6m3tw0h228qsrxmvs8m9w2")).To(HaveFieldError("id"))
		})
	})

	Describe("PATCH /contacts/{id}", func() {
		var c map[string]any
		BeforeEach(func() {
			c = t.createContactIn(acct, map[string]any{"phone_number": "+14155550123", "email": "mia@example.com",
				"first_name": "Mia", "last_name": "Toretto", "metadata": map[string]any{"crm_id": "42"}})
		})

		DescribeTable("changes only the fields present in the body",
			func(patch map[string]any) {
				want := map[string]any{}
				for k, v := range c {
					want[k] = v
				}
				for k, v := range patch {
					want[k] = v
				}
				r := t.patch("/contacts/"+c["id"].(string), patch)
				Expect(r).To(HaveStatus(http.StatusOK), r.String())
				Expect(r.JSON()).To(Equal(want))
				Expect(t.get("/contacts/"+c["id"].(string)).JSON()).To(Equal(want), "the change is stored")
			},
			Entry("phone_number", map[string]any{"phone_number": "+14155550999"}),
			Entry("email", map[string]any{"email": "mia.toretto@example.com"}),
			Entry("first_name", map[string]any{"first_name": "Letty"}),
			Entry("last_name", map[string]any{"last_name": "Ortiz"}),
			Entry("metadata", map[string]any{"metadata": map[string]any{"crm_id": "43", "tier": "gold"}}),
			Entry("outbound_disabled", map[string]any{"outbound_disabled": true}),
			Entry("several fields", map[string]any{"first_name": "Letty", "outbound_disabled": true, "email": "letty@example.com"}),
			Entry("nothing (an empty body)", map[string]any{}),
			Entry("the phone number it already has", map[string]any{"phone_number": "+14155550123"}),
		)

		It("disables and re-enables outbound messaging", func() {
			id := c["id"].(string)
			Expect(t.patch("/contacts/"+id, map[string]any{"outbound_disabled": true}).JSON()).To(HaveKeyWithValue("outbound_disabled", true))
			Expect(t.get("/contacts/" + id).JSON()).To(HaveKeyWithValue("outbound_disabled", true))
			Expect(t.patch("/contacts/"+id, map[string]any{"first_name": "Mia"}).JSON()).To(HaveKeyWithValue("outbound_disabled", true),
				"a patch without outbound_disabled keeps it")
			Expect(t.patch("/contacts/"+id, map[string]any{"outbound_disabled": false}).JSON()).To(HaveKeyWithValue("outbound_disabled", false))
			Expect(t.get("/contacts/" + id).JSON()).To(HaveKeyWithValue("outbound_disabled", false))
		})

		It("refuses with 409 a phone number that another contact of the account has, and changes nothing", func() {
			t.createContactIn(acct, map[string]any{"phone_number": "+14155550124"})
			r := t.patch("/contacts/"+c["id"].(string), map[string]any{"phone_number": "+14155550124", "first_name": "Letty"})
			Expect(r).To(HaveConflict(), r.String())
			Expect(t.get("/contacts/" + c["id"].(string)).JSON()).To(Equal(c))
		})

		It("accepts a phone number that a contact of another account has", func() {
			sibling := t.createAccount("Sibling")
			t.createContactIn(sibling, map[string]any{"phone_number": "+14155550124"})
			r := t.patch("/contacts/"+c["id"].(string), map[string]any{"phone_number": "+14155550124"})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(HaveKeyWithValue("phone_number", "+14155550124"))
		})

		It("frees the old phone number for a new contact", func() {
			Expect(t.patch("/contacts/"+c["id"].(string), map[string]any{"phone_number": "+14155550999"})).To(HaveStatus(http.StatusOK))
			t.createContactIn(acct, map[string]any{"phone_number": "+14155550123"})
		})

		DescribeTable("refuses an invalid change with 422 naming the field and changes nothing",
			func(patch map[string]any, field string) {
				r := t.patch("/contacts/"+c["id"].(string), patch)
				Expect(r).To(HaveFieldError(field), r.String())
				Expect(t.get("/contacts/" + c["id"].(string)).JSON()).To(Equal(c))
			},
			Entry("phone_number not E.164", map[string]any{"phone_number": "415-555-0123"}, "phone_number"),
			Entry("phone_number null", map[string]any{"phone_number": nil}, "phone_number"),
			Entry("email invalid", map[string]any{"email": "mia@"}, "email"),
			Entry("outbound_disabled not a boolean", map[string]any{"outbound_disabled": "yes"}, "outbound_disabled"),
			Entry("metadata with 51 keys", map[string]any{"metadata": metadataWithKeys(51)}, "metadata"),
			Entry("metadata value over 500 characters", map[string]any{"metadata": map[string]any{"notes": strings.Repeat("z", 501)}}, "metadata.notes"),
			Entry("opted_out, which only the contact changes", map[string]any{"opted_out": true}, "opted_out"),
			Entry("unknown field", map[string]any{"company": "Acme"}, "company"),
		)

		It("returns 404 for a contact that does not exist", func() {
			r := t.patch("/contacts/ctc_01jfz0d5zty2zdw0r1ggq7j0ns", map[string]any{"first_name": "X"})
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("across projects", func() {
		It("reports another project's contact exactly like a missing one and leaves it alone", func() {
			other := newTenant()
			their := other.createContactIn(other.createAccount("Theirs"), map[string]any{"phone_number": "+14155550123", "first_name": "Secret"})
			id, missing := their["id"].(string), "ctc_01jfz0d5zty2zdw0r1ggq7j0ns"

			get := t.get("/contacts/" + id)
			Expect(get).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(get.Body).To(MatchJSON(t.get("/contacts/" + missing).Body))

			patch := map[string]any{"first_name": "Mine", "outbound_disabled": true}
			r := t.patch("/contacts/"+id, patch)
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(r.Body).To(MatchJSON(t.patch("/contacts/"+missing, patch).Body))

			Expect(other.get("/contacts/" + id).JSON()).To(Equal(their))
		})
	})
})
