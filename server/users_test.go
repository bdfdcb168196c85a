package server_test

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// userIDPattern is a user TypeID.
const userIDPattern = `^usr_[0-7][0-9a-hjkmnp-tv-z]{25}$`

// createUserIn creates a user in an account and returns it as the API answered it.
func (t *tenant) createUserIn(accountID string, body map[string]any) map[string]any {
	r := t.post("/accounts/"+accountID+"/users", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

// metadataWithKeys returns metadata with n distinct keys.
func metadataWithKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("key_%02d", i)] = "v"
	}
	return m
}

// idsOf returns the ids of a list response's data, in order.
func idsOf(r *response) []string {
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	r.Into(&page)
	ids := make([]string, 0, len(page.Data))
	for _, d := range page.Data {
		ids = append(ids, d.ID)
	}
	return ids
}

// cursorsOf returns a list response's next and previous cursors ("" for null).
func cursorsOf(r *response) (next, previous string) {
	var page struct {
		Pagination struct {
			Next     *string `json:"next_cursor"`
			Previous *string `json:"previous_cursor"`
		} `json:"pagination"`
	}
	r.Into(&page)
	if page.Pagination.Next != nil {
		next = *page.Pagination.Next
	}
	if page.Pagination.Previous != nil {
		previous = *page.Pagination.Previous
	}
	return next, previous
}

var _ = Describe("Users", func() {
	var (
		t    *tenant
		acct string
	)
	BeforeEach(func() {
		t = newTenant()
		acct = t.createAccount("Acme Dental")
	})

	Describe("POST /accounts/{account_id}/users", func() {
		It("creates a user with every field and answers 201 with it", func() {
			r := t.post("/accounts/"+acct+"/users", map[string]any{
				"first_name": "Brian", "last_name": "O'Conner",
				"metadata":  map[string]any{"role": "agent", "desk": "3"},
				"photo_url": "https://example.com/avatars/brian.png",
			})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			Expect(r.JSON()).To(SatisfyAll(
				HaveKeyWithValue("id", MatchRegexp(userIDPattern)),
				HaveKeyWithValue("first_name", "Brian"),
				HaveKeyWithValue("last_name", "O'Conner"),
				HaveKeyWithValue("metadata", Equal(map[string]any{"role": "agent", "desk": "3"})),
				HaveKeyWithValue("photo_url", "https://example.com/avatars/brian.png"),
			))
		})

		It("needs only first_name; the other fields are null and metadata is empty", func() {
			u := t.createUserIn(acct, map[string]any{"first_name": "Mia"})
			Expect(u).To(Equal(map[string]any{
				"id": u["id"], "first_name": "Mia", "last_name": nil, "metadata": map[string]any{}, "photo_url": nil,
			}))
			Expect(u["id"]).To(MatchRegexp(userIDPattern))
		})

		It("accepts metadata at its limits: 50 keys and 500-character values", func() {
			md := metadataWithKeys(50)
			md["key_00"] = strings.Repeat("x", 500)
			u := t.createUserIn(acct, map[string]any{"first_name": "Mia", "metadata": md})
			Expect(u["metadata"]).To(HaveLen(50))
			Expect(u["metadata"]).To(HaveKeyWithValue("key_00", HaveLen(500)))
		})

		It("returns 404 for an account that does not exist", func() {
			r := t.post("/accounts/acct_01jtp4dsdq6de56aa0tfm2e5b3/users", map[string]any{"first_name": "Mia"})
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("returns 404 for an account of another project and creates nothing there", func() {
			other := newTenant()
			theirs := other.createAccount("Theirs")
			r := t.post("/accounts/"+theirs+"/users", map[string]any{"first_name": "Mia"})
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(idsOf(other.get("/accounts/" + theirs + "/users"))).To(BeEmpty())
		})

		It("answers 400 invalid_json to a body that is not JSON", func() {
			r := t.post("/accounts/"+acct+"/users", `{"first_name": "Mia"`)
			Expect(r).To(HaveError(http.StatusBadRequest, "invalid_json"))
		})

		DescribeTable("refuses an invalid body with 422 naming the field",
			func(body map[string]any, field string) {
				r := t.post("/accounts/"+acct+"/users", body)
				Expect(r).To(HaveFieldError(field), r.String())
				Expect(idsOf(t.get("/accounts/"+acct+"/users"))).To(BeEmpty(), "nothing was created")
			},
			Entry("first_name missing", map[string]any{"last_name": "O'Conner"}, "first_name"),
			Entry("first_name empty", map[string]any{"first_name": ""}, "first_name"),
			Entry("first_name not a string", map[string]any{"first_name": 42}, "first_name"),
			Entry("first_name null", map[string]any{"first_name": nil}, "first_name"),
			Entry("last_name not a string", map[string]any{"first_name": "Mia", "last_name": true}, "last_name"),
			Entry("photo_url not a URL", map[string]any{"first_name": "Mia", "photo_url": "not a url"}, "photo_url"),
			Entry("photo_url not http(s)", map[string]any{"first_name": "Mia", "photo_url": "ftp://example.com/a.png"}, "photo_url"),
			Entry("photo_url relative", map[string]any{"first_name": "Mia", "photo_url": "/avatars/a.png"}, "photo_url"),
			Entry("metadata not an object", map[string]any{"first_name": "Mia", "metadata": "role=agent"}, "metadata"),
			Entry("metadata value not a string", map[string]any{"first_name": "Mia", "metadata": map[string]any{"level": 3}}, "metadata.level"),
			Entry("metadata value over 500 characters", map[string]any{"first_name": "Mia", "metadata": map[string]any{"bio": strings.Repeat("x", 501)}}, "metadata.bio"),
			Entry("metadata with 51 keys", map[string]any{"first_name": "Mia", "metadata": metadataWithKeys(51)}, "metadata"),
			Entry("unknown field", map[string]any{"first_name": "Mia", "nickname": "M"}, "nickname"),
			Entry("id is not writable", map[string]any{"first_name": "Mia", "id": "usr_01jg6m3tw0h228qsrxmvs8m9w2"}, "id"),
		)

		It("refuses a malformed account id with 422 naming it", func() {
			r := t.post("/accounts/not-an-account/users", map[string]any{"first_name": "Mia"})
			Expect(r).To(HaveFieldError("account_id"), r.String())
		})
	})

	Describe("GET /accounts/{account_id}/users", func() {
		It("lists an account's users newest first, in pages of limit", func() {
			var ids []string // oldest first
			for i := range 5 {
				ids = append(ids, t.createUserIn(acct, map[string]any{"first_name": fmt.Sprintf("User %d", i)})["id"].(string))
			}
			base := "/accounts/" + acct + "/users?limit=2"

			first := t.get(base)
			Expect(first).To(HaveStatus(http.StatusOK), first.String())
			Expect(idsOf(first)).To(Equal([]string{ids[4], ids[3]}))
			next, prev := cursorsOf(first)
			Expect(prev).To(BeEmpty(), "the first page has no previous page")
			Expect(next).NotTo(BeEmpty())

			second := t.get(base + "&after=" + next)
			Expect(second).To(HaveStatus(http.StatusOK), second.String())
			Expect(idsOf(second)).To(Equal([]string{ids[2], ids[1]}))
			next, prev = cursorsOf(second)
			Expect(next).NotTo(BeEmpty())
			Expect(prev).NotTo(BeEmpty())

			third := t.get(base + "&after=" + next)
			Expect(third).To(HaveStatus(http.StatusOK), third.String())
			Expect(idsOf(third)).To(Equal([]string{ids[0]}))
			next, prev = cursorsOf(third)
			Expect(next).To(BeEmpty(), "the last page has no next page")

			back := t.get(base + "&before=" + prev)
			Expect(back).To(HaveStatus(http.StatusOK), back.String())
			Expect(idsOf(back)).To(Equal([]string{ids[2], ids[1]}))
		})

		It("returns the full user objects", func() {
			u := t.createUserIn(acct, map[string]any{"first_name": "Mia", "last_name": "Toretto",
				"metadata": map[string]any{"role": "agent"}, "photo_url": "https://example.com/m.png"})
			var page struct {
				Data []map[string]any `json:"data"`
			}
			t.get("/accounts/" + acct + "/users").Into(&page)
			Expect(page.Data).To(Equal([]map[string]any{u}))
		})

		It("lists only the account's own users", func() {
			mine := t.createUserIn(acct, map[string]any{"first_name": "Mine"})["id"]
			sibling := t.createAccount("Sibling")
			theirs := t.createUserIn(sibling, map[string]any{"first_name": "Sibling's"})["id"]
			Expect(idsOf(t.get("/accounts/" + acct + "/users"))).To(Equal([]string{mine.(string)}))
			Expect(idsOf(t.get("/accounts/" + sibling + "/users"))).To(Equal([]string{theirs.(string)}))
		})

		It("answers an empty page for an account without users", func() {
			r := t.get("/accounts/" + acct + "/users")
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(Equal(map[string]any{
				"data":       []any{},
				"pagination": map[string]any{"next_cursor": nil, "previous_cursor": nil},
			}))
		})

		It("returns 404 for an account of another project", func() {
			other := newTenant()
			theirs := other.createAccount("Theirs")
			other.createUserIn(theirs, map[string]any{"first_name": "Secret"})
			Expect(t.get("/accounts/" + theirs + "/users")).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("GET /users/{id}", func() {
		It("retrieves a user", func() {
			u := t.createUserIn(acct, map[string]any{"first_name": "Mia", "last_name": "Toretto",
				"metadata": map[string]any{"role": "agent"}, "photo_url": "https://example.com/m.png"})
			r := t.get("/users/" + u["id"].(string))
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(Equal(u))
		})

		It("returns 404 for a user that does not exist", func() {
			Expect(t.get("/users/usr_01jg6m3tw0h228qsrxmvs8m9w2")).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("refuses a malformed user id with 422 naming it", func() {
			Expect(t.get("/users/ctc_01jfz0d5zty2zdw0r1ggq7j0ns")).To(HaveFieldError("id"))
		})
	})

	Describe("PATCH /users/{id}", func() {
		var u map[string]any
		BeforeEach(func() {
			u = t.createUserIn(acct, map[string]any{"first_name": "Brian", "last_name": "O'Conner",
				"metadata": map[string]any{"role": "agent"}, "photo_url": "https://example.com/brian.png"})
		})

		DescribeTable("changes only the fields present in the body",
			func(patch map[string]any) {
				want := map[string]any{}
				for k, v := range u {
					want[k] = v
				}
				for k, v := range patch {
					want[k] = v
				}
				r := t.patch("/users/"+u["id"].(string), patch)
				Expect(r).To(HaveStatus(http.StatusOK), r.String())
				Expect(r.JSON()).To(Equal(want))
				Expect(t.get("/users/"+u["id"].(string)).JSON()).To(Equal(want), "the change is stored")
			},
			Entry("first_name", map[string]any{"first_name": "Dominic"}),
			Entry("last_name", map[string]any{"last_name": "Toretto"}),
			Entry("metadata", map[string]any{"metadata": map[string]any{"role": "supervisor", "team": "b"}}),
			Entry("photo_url", map[string]any{"photo_url": "https://cdn.example.com/new.png"}),
			Entry("several fields", map[string]any{"first_name": "Dom", "photo_url": "https://cdn.example.com/dom.png"}),
			Entry("nothing (an empty body)", map[string]any{}),
		)

		DescribeTable("refuses an invalid change with 422 naming the field and changes nothing",
			func(patch map[string]any, field string) {
				r := t.patch("/users/"+u["id"].(string), patch)
				Expect(r).To(HaveFieldError(field), r.String())
				Expect(t.get("/users/" + u["id"].(string)).JSON()).To(Equal(u))
			},
			Entry("first_name empty", map[string]any{"first_name": ""}, "first_name"),
			Entry("first_name not a string", map[string]any{"first_name": []any{"Dom"}}, "first_name"),
			Entry("photo_url not a URL", map[string]any{"photo_url": "brian.png"}, "photo_url"),
			Entry("metadata value not a string", map[string]any{"metadata": map[string]any{"level": false}}, "metadata.level"),
			Entry("metadata value over 500 characters", map[string]any{"metadata": map[string]any{"bio": strings.Repeat("y", 501)}}, "metadata.bio"),
			Entry("metadata with 51 keys", map[string]any{"metadata": metadataWithKeys(51)}, "metadata"),
			Entry("unknown field", map[string]any{"email": "brian@example.com"}, "email"),
		)

		It("returns 404 for a user that does not exist", func() {
			r := t.patch("/users/usr_01jg6m3tw0h228qsrxmvs8m9w2", map[string]any{"first_name": "X"})
			Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("DELETE /users/{id}", func() {
		It("answers 200 with the user, which is then gone", func() {
			u := t.createUserIn(acct, map[string]any{"first_name": "Brian", "metadata": map[string]any{"role": "agent"}})
			keep := t.createUserIn(acct, map[string]any{"first_name": "Mia"})
			id := u["id"].(string)

			r := t.delete("/users/" + id)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(Equal(u))

			Expect(t.get("/users/" + id)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.patch("/users/"+id, map[string]any{"first_name": "Back"})).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.delete("/users/"+id)).To(HaveError(http.StatusNotFound, "not_found"), "deleting twice")
			Expect(t.post("/users/"+id+"/tokens", nil)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(idsOf(t.get("/accounts/" + acct + "/users"))).To(Equal([]string{keep["id"].(string)}))
		})
	})

	Describe("across projects", func() {
		var (
			other *tenant
			their map[string]any
		)
		BeforeEach(func() {
			other = newTenant()
			their = other.createUserIn(other.createAccount("Theirs"), map[string]any{"first_name": "Secret"})
		})

		It("reports another project's user exactly like a missing one, for every operation", func() {
			id := their["id"].(string)
			missing := "usr_01jg6m3tw0h228qsrxmvs8m9w2"
			for _, try := range []func(id string) *response{
				func(id string) *response { return t.get("/users/" + id) },
				func(id string) *response { return t.patch("/users/"+id, map[string]any{"first_name": "Mine"}) },
				func(id string) *response { return t.delete("/users/" + id) },
				func(id string) *response { return t.post("/users/"+id+"/tokens", nil) },
			} {
				theirs, nothing := try(id), try(missing)
				Expect(theirs).To(HaveError(http.StatusNotFound, "not_found"))
				Expect(theirs.Body).To(MatchJSON(nothing.Body), "no existence leak")
			}
			Expect(other.get("/users/"+id).JSON()).To(Equal(their), "the other project's user is untouched")
		})
	})
})
