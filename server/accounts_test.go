package server_test

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// fullOrganization is an organization with every field brand registration needs.
func fullOrganization() map[string]any {
	return map[string]any{
		"address": map[string]any{
			"country": "US", "line1": "1327 Vine St", "line2": "Suite 4", "locality": "Los Angeles",
			"name": "DT Precision Auto", "postal_code": "90028", "region": "CA",
		},
		"contact": map[string]any{
			"email": "dom@dtprecisionauto.com", "first_name": "Dominic", "last_name": "Toretto",
			"phone_number": "+13235550100", "title": "ceo",
		},
		"country":              "US",
		"email":                "info@dtprecisionauto.com",
		"identifier":           "12-3456789",
		"identifier_type":      "ein",
		"industry":             "automotive",
		"regions_of_operation": []any{"usa_and_canada"},
		"registered_name":      "DT Precision Auto LLC",
		"type":                 "llc",
		"website":              "https://dtprecisionauto.com",
	}
}

// localMessaging returns the local_messaging capability of an account status response.
func localMessaging(r *response) map[string]any {
	caps, _ := r.JSON()["capabilities"].(map[string]any)
	lm, _ := caps["local_messaging"].(map[string]any)
	ExpectWithOffset(1, lm).NotTo(BeNil(), r.String())
	return lm
}

var _ = Describe("Accounts", func() {
	var t *tenant
	BeforeEach(func() { t = newTenant() })

	Describe("creating", func() {
		It("creates an account with 201 and returns it", func() {
			r := t.post("/accounts", map[string]any{"name": "Acme Dental", "time_zone": "America/New_York"})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			a := r.JSON()
			Expect(a["id"]).To(MatchRegexp(`^acct_[0-7][0-9a-hjkmnp-tv-z]{25}$`))
			Expect(a).To(HaveKeyWithValue("name", "Acme Dental"))
			Expect(a).To(HaveKeyWithValue("brand_name", "Acme Dental"))
			Expect(a).To(HaveKeyWithValue("time_zone", "America/New_York"))
		})

		It("keeps a brand_name that differs from the name", func() {
			r := t.post("/accounts", map[string]any{"name": "Acme (customer 42)", "brand_name": "Acme"})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("name", "Acme (customer 42)"), HaveKeyWithValue("brand_name", "Acme")))
		})

		It("has a null time_zone and an organization of nulls, its address and contact objects of nulls, when none is given", func() {
			r := t.post("/accounts", map[string]any{"name": "Bare"})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			a := r.JSON()
			Expect(a).To(HaveKeyWithValue("time_zone", BeNil()))
			Expect(a["organization"]).To(SatisfyAll(
				HaveKeyWithValue("website", BeNil()),
				HaveKeyWithValue("registered_name", BeNil()),
				HaveKeyWithValue("address", Equal(map[string]any{"country": nil, "line1": nil, "line2": nil, "locality": nil,
					"name": nil, "postal_code": nil, "region": nil})),
				HaveKeyWithValue("contact", Equal(map[string]any{"email": nil, "first_name": nil, "last_name": nil,
					"phone_number": nil, "title": nil, "title_other": nil})),
			), "Surge's SDK types address and contact as objects, which its users dereference")
		})

		It("takes null as Surge's SDKs send it: none on create, and on update a field cleared", func() {
			r := t.post("/accounts", map[string]any{"name": "Nulls", "brand_name": nil, "time_zone": nil, "organization": map[string]any{
				"registered_name": "DT LLC", "identifier_type": nil, "stock_symbol": nil, "contact": nil,
				"address": map[string]any{"line1": "1327 Vine St", "line2": nil}}})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			a := r.JSON()
			Expect(a).To(SatisfyAll(HaveKeyWithValue("brand_name", "Nulls"), HaveKeyWithValue("time_zone", BeNil())))
			org := a["organization"].(map[string]any)
			Expect(org).To(SatisfyAll(HaveKeyWithValue("registered_name", "DT LLC"), HaveKeyWithValue("identifier_type", BeNil())))
			Expect(org["address"]).To(SatisfyAll(HaveKeyWithValue("line1", "1327 Vine St"), HaveKeyWithValue("line2", BeNil())))
			Expect(org["contact"]).To(HaveKeyWithValue("email", BeNil()))

			id := a["id"].(string)
			r = t.patch("/accounts/"+id, map[string]any{"brand_name": "DT", "time_zone": "America/Los_Angeles",
				"organization": map[string]any{"contact": map[string]any{"first_name": "Dom", "email": "dom@dt.example"}}})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			r = t.patch("/accounts/"+id, map[string]any{"brand_name": nil, "time_zone": nil, "organization": map[string]any{
				"registered_name": nil, "address": map[string]any{"line1": nil}, "contact": map[string]any{"email": nil}}})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			a = r.JSON()
			Expect(a).To(SatisfyAll(HaveKeyWithValue("brand_name", "Nulls"), HaveKeyWithValue("time_zone", BeNil())),
				"a null brand_name clears it back to the name")
			org = a["organization"].(map[string]any)
			Expect(org).To(HaveKeyWithValue("registered_name", BeNil()))
			Expect(org["address"]).To(HaveKeyWithValue("line1", BeNil()))
			Expect(org["contact"]).To(SatisfyAll(HaveKeyWithValue("first_name", "Dom"), HaveKeyWithValue("email", BeNil())))

			r = t.patch("/accounts/"+id, map[string]any{"organization": map[string]any{"contact": nil, "address": nil}})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			org = r.JSON()["organization"].(map[string]any)
			Expect(org["contact"]).To(HaveKeyWithValue("first_name", BeNil()), "a null contact clears all of its fields")
			Expect(org["address"]).To(HaveKeyWithValue("country", BeNil()))
		})

		DescribeTable("takes every identifier type Surge documents",
			func(typ string) {
				r := t.post("/accounts", map[string]any{"name": "Ids", "organization": map[string]any{"identifier_type": typ, "identifier": "123456789"}})
				Expect(r).To(HaveStatus(http.StatusCreated), r.String())
				Expect(r.JSON()["organization"]).To(HaveKeyWithValue("identifier_type", typ))
			},
			Entry(nil, "ein"), Entry(nil, "cbn"), Entry(nil, "vat"),
		)

		It("round-trips the organization, nested address and contact included", func() {
			org := fullOrganization()
			r := t.post("/accounts", map[string]any{"name": "DT", "organization": org, "time_zone": "America/Los_Angeles"})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			id := r.JSON()["id"].(string)
			got := t.get("/accounts/" + id)
			Expect(got).To(HaveStatus(http.StatusOK), got.String())
			for _, got := range []*response{r, got} {
				o := got.JSON()["organization"].(map[string]any)
				Expect(o["address"]).To(Equal(org["address"]))
				Expect(o["contact"]).To(HaveKeyWithValue("email", "dom@dtprecisionauto.com"))
				Expect(o["contact"]).To(HaveKeyWithValue("phone_number", "+13235550100"))
				Expect(o["contact"]).To(HaveKeyWithValue("title", "ceo"))
				Expect(o["regions_of_operation"]).To(Equal([]any{"usa_and_canada"}))
				for _, k := range []string{"country", "email", "identifier", "identifier_type", "industry", "registered_name", "type", "website"} {
					Expect(o).To(HaveKeyWithValue(k, org[k]), k)
				}
				Expect(got.JSON()).To(HaveKeyWithValue("time_zone", "America/Los_Angeles"))
			}
		})
	})

	Describe("listing and retrieving", func() {
		It("lists the project's accounts newest first, archived ones included", func() {
			first, second := t.createAccount("First"), t.createAccount("Second")
			Expect(t.delete("/accounts/" + first)).To(HaveStatus(http.StatusOK))
			newTenant().createAccount("Someone else's")

			r := t.get("/accounts")
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			var list struct {
				Data       []map[string]any `json:"data"`
				Pagination map[string]any   `json:"pagination"`
			}
			r.Into(&list)
			Expect(list.Data).To(HaveLen(2))
			Expect(list.Data[0]).To(HaveKeyWithValue("id", second))
			Expect(list.Data[1]).To(HaveKeyWithValue("id", first))
			Expect(list.Pagination).To(SatisfyAll(HaveKeyWithValue("next_cursor", BeNil()), HaveKeyWithValue("previous_cursor", BeNil())))
		})

		It("retrieves an account exactly as it was created", func() {
			created := t.post("/accounts", map[string]any{"name": "Acme", "brand_name": "Acme Co", "organization": map[string]any{"country": "US"}})
			Expect(created).To(HaveStatus(http.StatusCreated), created.String())
			got := t.get("/accounts/" + created.JSON()["id"].(string))
			Expect(got).To(HaveStatus(http.StatusOK), got.String())
			Expect(got.JSON()).To(Equal(created.JSON()))
		})

		It("answers 404 not_found for a well-formed id that does not exist", func() {
			Expect(t.get("/accounts/" + store.NewID("acct"))).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("updating", func() {
		var id string
		BeforeEach(func() {
			r := t.post("/accounts", map[string]any{
				"name": "Acme", "brand_name": "Acme Co", "time_zone": "Europe/Paris",
				"organization": map[string]any{
					"country": "FR", "registered_name": "Acme SAS",
					"address": map[string]any{"line1": "1 rue de la Paix", "locality": "Paris"},
					"contact": map[string]any{"first_name": "Jeanne", "last_name": "Dupont"},
				},
			})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			id = r.JSON()["id"].(string)
		})

		It("changes only the fields present in the body", func() {
			before := t.get("/accounts/" + id).JSON()
			r := t.patch("/accounts/"+id, map[string]any{"brand_name": "Acme Paris"})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			after := r.JSON()
			Expect(after).To(HaveKeyWithValue("brand_name", "Acme Paris"))
			before["brand_name"] = "Acme Paris"
			Expect(after).To(Equal(before))
			Expect(t.get("/accounts/" + id).JSON()).To(Equal(after))
		})

		It("renames the account without touching its brand name", func() {
			r := t.patch("/accounts/"+id, map[string]any{"name": "Acme (renamed)"})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("name", "Acme (renamed)"), HaveKeyWithValue("brand_name", "Acme Co")))
		})

		It("accepts an empty body and changes nothing", func() {
			before := t.get("/accounts/" + id).JSON()
			r := t.patch("/accounts/"+id, map[string]any{})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(Equal(before))
		})

		It("merges organization fields, nested address and contact included", func() {
			r := t.patch("/accounts/"+id, map[string]any{"organization": map[string]any{
				"website": "https://acme.example",
				"address": map[string]any{"line2": "Bâtiment B"},
				"contact": map[string]any{"title": "ceo"},
			}})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			o := r.JSON()["organization"].(map[string]any)
			Expect(o).To(HaveKeyWithValue("website", "https://acme.example"))
			Expect(o).To(HaveKeyWithValue("country", "FR"))
			Expect(o).To(HaveKeyWithValue("registered_name", "Acme SAS"))
			Expect(o["address"]).To(SatisfyAll(
				HaveKeyWithValue("line1", "1 rue de la Paix"),
				HaveKeyWithValue("line2", "Bâtiment B"),
				HaveKeyWithValue("locality", "Paris"),
			))
			Expect(o["contact"]).To(SatisfyAll(
				HaveKeyWithValue("first_name", "Jeanne"),
				HaveKeyWithValue("last_name", "Dupont"),
				HaveKeyWithValue("title", "ceo"),
			))
			Expect(t.get("/accounts/" + id).JSON()["organization"]).To(Equal(o))
		})

		It("clears the time zone when time_zone is null", func() {
			r := t.patch("/accounts/"+id, map[string]any{"time_zone": nil})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(HaveKeyWithValue("time_zone", BeNil()))
			Expect(t.get("/accounts/" + id).JSON()).To(HaveKeyWithValue("time_zone", BeNil()))
		})

		It("changes the time zone and leaves it when time_zone is absent", func() {
			Expect(t.patch("/accounts/"+id, map[string]any{"time_zone": "Asia/Tokyo"}).JSON()).To(HaveKeyWithValue("time_zone", "Asia/Tokyo"))
			Expect(t.patch("/accounts/"+id, map[string]any{"name": "Other"}).JSON()).To(HaveKeyWithValue("time_zone", "Asia/Tokyo"))
		})

		DescribeTable("refuses a time_zone that is not an IANA zone with 422 and keeps the old one",
			func(tz string) {
				Expect(t.patch("/accounts/"+id, map[string]any{"time_zone": tz})).To(HaveFieldError("time_zone"))
				Expect(t.get("/accounts/" + id).JSON()).To(HaveKeyWithValue("time_zone", "Europe/Paris"))
			},
			Entry("an unknown zone", "Mars/Olympus_Mons"),
			Entry("an empty string", ""),
			Entry("the process-local zone", "Local"),
			Entry("a UTC offset", "+02:00"),
		)
	})

	Describe("archiving", func() {
		var id string
		BeforeEach(func() { id = t.createAccount("Doomed") })

		It("archives with DELETE and returns the account with 200", func() {
			r := t.delete("/accounts/" + id)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("id", id), HaveKeyWithValue("name", "Doomed"), HaveKey("organization"), HaveKey("time_zone")))
		})

		It("answers 200 with the same account when archiving again", func() {
			first := t.delete("/accounts/" + id)
			Expect(first).To(HaveStatus(http.StatusOK))
			again := t.delete("/accounts/" + id)
			Expect(again).To(HaveStatus(http.StatusOK), again.String())
			Expect(again.JSON()).To(Equal(first.JSON()))
		})

		It("keeps the archived account retrievable", func() {
			Expect(t.delete("/accounts/" + id)).To(HaveStatus(http.StatusOK))
			Expect(t.get("/accounts/" + id)).To(HaveStatus(http.StatusOK))
		})

		It("refuses to update an archived account with 422 account_archived", func() {
			Expect(t.delete("/accounts/" + id)).To(HaveStatus(http.StatusOK))
			Expect(t.patch("/accounts/"+id, map[string]any{"name": "Revived"})).To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
			Expect(t.get("/accounts/" + id).JSON()).To(HaveKeyWithValue("name", "Doomed"))
		})
	})

	Describe("status", func() {
		statusOf := func(id string) *response {
			r := t.get("/accounts/" + id + "/status?capabilities=local_messaging")
			ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
			return r
		}

		It("names the organization fields an empty organization lacks, and is an error while it has no campaign", func() {
			lm := localMessaging(statusOf(t.createAccount("Empty")))
			Expect(lm).To(HaveKeyWithValue("status", "error"), "Surge prefers error over incomplete")
			Expect(lm["errors"]).To(ContainElement(HaveKeyWithValue("type", "campaign_required")))
			Expect(lm["fields_needed"]).To(ContainElements(
				"organization.address", "organization.contact", "organization.registered_name",
				"organization.website", "organization.identifier", "organization.regions_of_operation",
			))
			for _, f := range lm["fields_needed"].([]any) {
				Expect(f).To(HavePrefix("organization."))
			}
		})

		It("needs fewer fields once the organization is filled in", func() {
			id := t.createAccount("Filling")
			emptyNeeds := localMessaging(statusOf(id))["fields_needed"].([]any)

			org := fullOrganization()
			delete(org, "website")
			Expect(t.patch("/accounts/"+id, map[string]any{"organization": org})).To(HaveStatus(http.StatusOK))
			lm := localMessaging(statusOf(id))
			Expect(len(lm["fields_needed"].([]any))).To(BeNumerically("<", len(emptyNeeds)))
			Expect(lm["fields_needed"]).To(ConsistOf("organization.website"))

			Expect(t.patch("/accounts/"+id, map[string]any{"organization": map[string]any{"website": "https://dt.example"}})).To(HaveStatus(http.StatusOK))
			lm = localMessaging(statusOf(id))
			Expect(lm["fields_needed"]).To(BeEmpty())
			// No campaign is registered yet, so the capability is still not ready: an error is listed.
			Expect(lm).To(HaveKeyWithValue("status", "error"))
			Expect(lm["errors"]).To(ContainElement(HaveKeyWithValue("type", "campaign_required")))
		})

		It("reports all capabilities when none is asked for", func() {
			r := t.get("/accounts/" + t.createAccount("Any") + "/status")
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(localMessaging(r)).To(HaveKey("status"))
		})

		It("is an error for an archived account", func() {
			r := t.post("/accounts", map[string]any{"name": "Full", "organization": fullOrganization()})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			id := r.JSON()["id"].(string)
			Expect(t.delete("/accounts/" + id)).To(HaveStatus(http.StatusOK))
			lm := localMessaging(statusOf(id))
			Expect(lm).To(HaveKeyWithValue("status", "error"))
			Expect(lm["errors"]).To(ContainElement(HaveKeyWithValue("type", "account_archived")))
		})

		It("refuses an unknown capability with 422", func() {
			Expect(t.get("/accounts/" + t.createAccount("Any") + "/status?capabilities=teleportation")).To(HaveFieldError("capabilities.0"))
		})
	})

	Describe("of another project", func() {
		var theirs string
		var owner *tenant
		BeforeEach(func() {
			owner = newTenant()
			theirs = owner.createAccount("Not yours")
		})

		DescribeTable("is reported as 404 not_found, exactly like a missing account",
			func(method, pathFmt string, body any) {
				r := t.request(method, strings.ReplaceAll(pathFmt, "{id}", theirs), body)
				Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
				missing := t.request(method, strings.ReplaceAll(pathFmt, "{id}", store.NewID("acct")), body)
				Expect(missing).To(HaveError(http.StatusNotFound, "not_found"))
				Expect(r.JSON()).To(Equal(missing.JSON()))
			},
			Entry("GET /accounts/{id}", http.MethodGet, "/accounts/{id}", nil),
			Entry("PATCH /accounts/{id}", http.MethodPatch, "/accounts/{id}", map[string]any{"name": "Hijacked"}),
			Entry("DELETE /accounts/{id}", http.MethodDelete, "/accounts/{id}", nil),
			Entry("GET /accounts/{id}/status", http.MethodGet, "/accounts/{id}/status", nil),
			Entry("GET /accounts/{id}/users", http.MethodGet, "/accounts/{id}/users", nil),
			Entry("POST /accounts/{id}/users", http.MethodPost, "/accounts/{id}/users", map[string]any{"first_name": "Mallory"}),
			Entry("GET /accounts/{id}/contacts", http.MethodGet, "/accounts/{id}/contacts", nil),
			Entry("POST /accounts/{id}/contacts", http.MethodPost, "/accounts/{id}/contacts", map[string]any{"phone_number": "+14155550123"}),
		)

		It("is left untouched by another project's PATCH and DELETE", func() {
			t.patch("/accounts/"+theirs, map[string]any{"name": "Hijacked"})
			t.delete("/accounts/" + theirs)
			t.post("/accounts/"+theirs+"/users", map[string]any{"first_name": "Mallory"})
			Expect(owner.get("/accounts/" + theirs).JSON()).To(HaveKeyWithValue("name", "Not yours"))
			Expect(owner.patch("/accounts/"+theirs, map[string]any{"brand_name": "Still mine"})).To(HaveStatus(http.StatusOK))
			Expect(owner.get("/accounts/" + theirs + "/users").JSON()["data"]).To(BeEmpty())
		})

		It("is not listed", func() {
			t.createAccount("Mine")
			Expect(t.get("/accounts").JSON()["data"]).To(HaveExactElements(HaveKeyWithValue("name", "Mine")))
		})
	})

	DescribeTable("refuses an invalid create body with 422 naming the field",
		func(body any, field string) {
			Expect(t.post("/accounts", body)).To(HaveFieldError(field))
			Expect(t.get("/accounts").JSON()["data"]).To(BeEmpty(), "nothing was created")
		},
		Entry("name missing", map[string]any{"brand_name": "Acme"}, "name"),
		Entry("name empty", map[string]any{"name": ""}, "name"),
		Entry("name too long", map[string]any{"name": strings.Repeat("a", 256)}, "name"),
		Entry("name not a string", map[string]any{"name": 42}, "name"),
		Entry("brand_name empty", map[string]any{"name": "Acme", "brand_name": ""}, "brand_name"),
		Entry("unknown field", map[string]any{"name": "Acme", "nickname": "acme"}, "nickname"),
		Entry("organization not an object", map[string]any{"name": "Acme", "organization": "Acme LLC"}, "organization"),
		Entry("organization.email invalid", map[string]any{"name": "Acme", "organization": map[string]any{"email": "not-an-email"}}, "organization.email"),
		Entry("organization.website not a URL", map[string]any{"name": "Acme", "organization": map[string]any{"website": "acme dot com"}}, "organization.website"),
		Entry("organization.website not http(s)", map[string]any{"name": "Acme", "organization": map[string]any{"website": "ftp://acme.example"}}, "organization.website"),
		Entry("organization.country not a two-letter code", map[string]any{"name": "Acme", "organization": map[string]any{"country": "USA"}}, "organization.country"),
		Entry("organization.industry not in the enum", map[string]any{"name": "Acme", "organization": map[string]any{"industry": "piracy"}}, "organization.industry"),
		Entry("organization unknown field", map[string]any{"name": "Acme", "organization": map[string]any{"motto": "yes"}}, "organization.motto"),
		Entry("organization.address unknown field", map[string]any{"name": "Acme", "organization": map[string]any{"address": map[string]any{"planet": "Earth"}}}, "organization.address.planet"),
		Entry("organization.contact.phone_number not E.164", map[string]any{"name": "Acme", "organization": map[string]any{"contact": map[string]any{"phone_number": "555-0100"}}}, "organization.contact.phone_number"),
		Entry("organization.contact.email invalid", map[string]any{"name": "Acme", "organization": map[string]any{"contact": map[string]any{"email": "dom@"}}}, "organization.contact.email"),
		Entry("time_zone not a zone", map[string]any{"name": "Acme", "time_zone": "Mars/Olympus_Mons"}, "time_zone"),
		Entry("time_zone not a string", map[string]any{"name": "Acme", "time_zone": 5}, "time_zone"),
	)

	DescribeTable("refuses an invalid update body with 422 naming the field",
		func(body any, field string) {
			id := t.createAccount("Acme")
			Expect(t.patch("/accounts/"+id, body)).To(HaveFieldError(field))
			Expect(t.get("/accounts/" + id).JSON()).To(HaveKeyWithValue("name", "Acme"))
		},
		Entry("name empty", map[string]any{"name": ""}, "name"),
		Entry("name too long", map[string]any{"name": strings.Repeat("a", 256)}, "name"),
		Entry("unknown field", map[string]any{"name": "X", "archived": true}, "archived"),
		Entry("organization.website not a URL", map[string]any{"name": "X", "organization": map[string]any{"website": "nope"}}, "organization.website"),
		Entry("organization.contact unknown field", map[string]any{"name": "X", "organization": map[string]any{"contact": map[string]any{"nickname": "D"}}}, "organization.contact.nickname"),
		Entry("time_zone not a zone", map[string]any{"name": "X", "time_zone": "Nowhere/Special"}, "time_zone"),
	)

	DescribeTable("refuses a malformed account id in the path with 422 naming it",
		func(method, path string, field string) {
			Expect(t.request(method, path, map[string]any{})).To(HaveFieldError(field))
		},
		Entry("GET with a wrong prefix", http.MethodGet, "/accounts/usr_01jtp4dsdq6de56aa0tfm2e5b3", "id"),
		Entry("GET with a short id", http.MethodGet, "/accounts/acct_123", "id"),
		Entry("GET with upper case", http.MethodGet, "/accounts/acct_01JTP4DSDQ6DE56AA0TFM2E5B3", "id"),
		Entry("PATCH", http.MethodPatch, "/accounts/acct_nope", "id"),
		Entry("DELETE", http.MethodDelete, "/accounts/acct_nope", "id"),
		Entry("status", http.MethodGet, "/accounts/acct_nope/status", "account_id"),
	)

	DescribeTable("answers 400 invalid_json for a malformed body",
		func(method string, body string) {
			path := "/accounts"
			if method == http.MethodPatch {
				path += "/" + t.createAccount("Acme")
			}
			Expect(t.request(method, path, body)).To(HaveError(http.StatusBadRequest, "invalid_json"))
		},
		Entry("POST with a truncated object", http.MethodPost, `{"name": "Acme"`),
		Entry("POST with plain text", http.MethodPost, `name=Acme`),
		Entry("POST with a trailing comma", http.MethodPost, `{"name": "Acme",}`),
		Entry("PATCH with a truncated object", http.MethodPatch, `{"name": `),
		Entry("PATCH with single quotes", http.MethodPatch, `{'name': 'Acme'}`),
	)
})
