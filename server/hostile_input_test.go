package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// projectTables are the tables whose rows belong to a project, compared before and after a
// refused request. api_logs is left out: every request is logged, refused or not.
var projectTables = []string{
	"accounts", "users", "contacts", "idempotency_keys", "events", "phone_numbers", "campaigns",
	"toll_free_campaigns", "conversations", "messages", "attachments", "links", "audiences", "blasts",
	"verifications", "webhook_endpoints", "webhook_deliveries", "calls", "recordings", "voicemails",
}

// projectRows returns every row the project has in projectTables, to compare a project's data
// before and after a request.
func projectRows(projectID string) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, table := range projectTables {
		var rows []map[string]any
		ExpectWithOffset(1, st.DB().WithContext(context.Background()).
			Raw(fmt.Sprintf("SELECT * FROM %s WHERE project_id = ?", table), projectID).
			Scan(&rows).Error).To(Succeed())
		slices.SortFunc(rows, func(a, b map[string]any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		out[table] = rows
	}
	return out
}

// detailOf returns a validation_error's messages for one field.
func detailOf(r *response, field string) []any {
	var m struct {
		Error struct {
			Detail map[string][]any `json:"detail"`
		} `json:"error"`
	}
	r.Into(&m)
	return m.Error.Detail[field]
}

// Text that cannot be stored (a NUL character: PostgreSQL refuses it in text columns; bytes that
// are not UTF-8 and lone surrogates, which encoding/json turns into U+FFFD) is refused before it
// reaches a handler, on every field of every operation, and nothing is stored.
var _ = Describe("Hostile input", Ordered, ContinueOnFailure, func() {
	// ids are the fixture's resources, by the placeholder that stands for them in paths.
	var (
		t   *tenant
		ids map[string]string
	)
	BeforeAll(func() {
		t = newTenant()
		acct := t.createAccount("Acme Dental")
		pn, _ := t.addNumber(acct, sendable)
		tollFree, _ := t.addNumber(acct, numberSetup{Type: store.NumberTollFree})
		created := func(path string, body map[string]any) string {
			r := t.post(path, body)
			ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
			return r.JSON()["id"].(string)
		}
		user := created("/accounts/"+acct+"/users", map[string]any{"first_name": "Mia"})
		contact := created("/accounts/"+acct+"/contacts", map[string]any{"phone_number": newHandset()})
		audience := created("/accounts/"+acct+"/audiences", map[string]any{"name": "VIP"})
		campaign := created("/accounts/"+acct+"/campaigns", campaignBody())
		// The simulated registry reviews the campaign soon: wait, so that it changes no row
		// while a spec compares them.
		Eventually(func() any { return t.get("/campaigns/" + campaign).JSON()["status"] }).
			WithTimeout(10 * time.Second).ShouldNot(Equal("in_review"))
		ids = map[string]string{"{acct}": acct, "{pn}": pn, "{tollfree}": tollFree, "{user}": user,
			"{contact}": contact, "{audience}": audience, "{campaign}": campaign}
	})
	// fill puts the fixture's ids in place of their placeholders, in a path or a body's strings.
	var fill func(v any) any
	fill = func(v any) any {
		switch v := v.(type) {
		case string:
			for k, id := range ids {
				v = strings.ReplaceAll(v, k, id)
			}
			return v
		case map[string]any:
			out := map[string]any{}
			for k, inner := range v {
				out[k] = fill(inner)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, inner := range v {
				out[i] = fill(inner)
			}
			return out
		}
		return v
	}
	// withNUL returns body with the string at the dotted path replaced by one holding a NUL.
	withNUL := func(body map[string]any, path string) map[string]any {
		b := fill(body).(map[string]any)
		var at any = b
		keys := strings.Split(path, ".")
		for _, k := range keys[:len(keys)-1] {
			switch c := at.(type) {
			case map[string]any:
				at = c[k]
			case []any:
				var i int
				fmt.Sscan(k, &i)
				at = c[i]
			}
		}
		last := keys[len(keys)-1]
		switch c := at.(type) {
		case map[string]any:
			c[last] = "before\x00after"
		case []any:
			var i int
			fmt.Sscan(last, &i)
			c[i] = "before\x00after"
		}
		return b
	}
	type M = map[string]any
	type L = []any
	message := M{"to": "+14155550100", "body": "Hi", "metadata": M{"order": "1"}, "attachments": L{M{"url": "https://example.com/a.png"}}}
	conversation := M{"conversation": M{"contact": M{"phone_number": "+14155550100", "first_name": "Mia", "last_name": "Lee",
		"email": "mia@example.com", "metadata": M{"vip": "yes"}}}, "body": "Hi"}
	organization := M{"registered_name": "Acme", "identifier": "12-3456789", "stock_symbol": "ACME", "website": "https://acme.test",
		"address": M{"line1": "1 Main St", "line2": "Suite 2", "locality": "Springfield", "region": "IL", "postal_code": "62701", "name": "Acme"},
		"contact": M{"first_name": "Mia", "last_name": "Lee", "title_other": "Boss", "email": "mia@acme.test"}}
	campaign := M{}
	for k, v := range campaignBody() {
		campaign[k] = v
	}
	campaign["message_samples"] = L{"Hi Mia, reply STOP to opt out.", "Your car is ready."}
	campaign["terms_and_conditions_url"] = "https://acme.test/terms"
	campaign["link_sample"] = "https://acme.test/l"
	tollFree := M{}
	for k, v := range tollFreeBody("{tollfree}") {
		tollFree[k] = v
	}
	tollFree["message_samples"] = L{"Your car is ready."}

	DescribeTable("refuses a NUL character in a JSON body with 422 naming the field, and stores nothing",
		func(method, path string, body M, field string) {
			before := projectRows(t.ProjectID)
			r := t.request(method, fill(path).(string), withNUL(body, field))
			Expect(r).To(HaveFieldError(field), r.String())
			Expect(detailOf(r, field)).To(ContainElement("must not contain NUL characters"))
			Expect(projectRows(t.ProjectID)).To(Equal(before), "nothing stored")
		},
		func(method, path string, _ M, field string) string { return method + " " + path + ": " + field },
		Entry(nil, "POST", "/accounts", M{"name": "Acme"}, "name"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "brand_name": "Acme"}, "brand_name"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "time_zone": "America/Chicago"}, "time_zone"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.registered_name"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.identifier"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.stock_symbol"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.address.line1"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.address.locality"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.contact.first_name"),
		Entry(nil, "POST", "/accounts", M{"name": "Acme", "organization": organization}, "organization.contact.title_other"),
		Entry(nil, "PATCH", "/accounts/{acct}", M{"name": "Acme"}, "name"),
		Entry(nil, "PATCH", "/accounts/{acct}", M{"organization": organization}, "organization.address.postal_code"),
		Entry(nil, "POST", "/accounts/{acct}/users", M{"first_name": "Mia", "last_name": "Lee"}, "first_name"),
		Entry(nil, "POST", "/accounts/{acct}/users", M{"first_name": "Mia", "last_name": "Lee"}, "last_name"),
		Entry(nil, "POST", "/accounts/{acct}/users", M{"first_name": "Mia", "metadata": M{"note": "x"}}, "metadata.note"),
		Entry(nil, "PATCH", "/users/{user}", M{"first_name": "Mia"}, "first_name"),
		Entry(nil, "PATCH", "/users/{user}", M{"metadata": M{"team": "x"}}, "metadata.team"),
		Entry(nil, "POST", "/accounts/{acct}/contacts", M{"phone_number": "+14155550100", "first_name": "Mia"}, "first_name"),
		Entry(nil, "POST", "/accounts/{acct}/contacts", M{"phone_number": "+14155550100", "email": "mia@example.com"}, "email"),
		Entry(nil, "POST", "/accounts/{acct}/contacts", M{"phone_number": "+14155550100"}, "phone_number"),
		Entry(nil, "POST", "/accounts/{acct}/contacts", M{"phone_number": "+14155550100", "metadata": M{"note": "x"}}, "metadata.note"),
		Entry(nil, "PATCH", "/contacts/{contact}", M{"last_name": "Lee"}, "last_name"),
		Entry(nil, "PATCH", "/contacts/{contact}", M{"metadata": M{"note": "x"}}, "metadata.note"),
		Entry(nil, "POST", "/accounts/{acct}/messages", message, "body"),
		Entry(nil, "POST", "/accounts/{acct}/messages", message, "metadata.order"),
		Entry(nil, "POST", "/accounts/{acct}/messages", message, "attachments.0.url"),
		Entry(nil, "POST", "/accounts/{acct}/messages", message, "to"),
		Entry(nil, "POST", "/accounts/{acct}/messages", conversation, "conversation.contact.first_name"),
		Entry(nil, "POST", "/accounts/{acct}/messages", conversation, "conversation.contact.email"),
		Entry(nil, "POST", "/accounts/{acct}/messages", conversation, "conversation.contact.metadata.vip"),
		Entry(nil, "POST", "/accounts/{acct}/blasts", M{"name": "Spring", "body": "Hi", "to": L{"+14155550100"}}, "name"),
		Entry(nil, "POST", "/accounts/{acct}/blasts", M{"name": "Spring", "body": "Hi", "to": L{"+14155550100"}}, "body"),
		Entry(nil, "POST", "/accounts/{acct}/blasts", M{"body": "Hi", "to": L{"+14155550100", "+14155550101"}}, "to.1"),
		Entry(nil, "POST", "/accounts/{acct}/audiences", M{"name": "VIP"}, "name"),
		Entry(nil, "POST", "/audiences/{audience}/contacts", M{"id": "{contact}"}, "id"),
		Entry(nil, "POST", "/accounts/{acct}/campaigns", campaign, "description"),
		Entry(nil, "POST", "/accounts/{acct}/campaigns", campaign, "consent_flow"),
		Entry(nil, "POST", "/accounts/{acct}/campaigns", campaign, "message_samples.1"),
		Entry(nil, "POST", "/accounts/{acct}/campaigns", campaign, "privacy_policy_url"),
		Entry(nil, "POST", "/accounts/{acct}/campaigns", M{"tcr_id": "CABC123"}, "tcr_id"),
		Entry(nil, "PATCH", "/campaigns/{campaign}", M{"description": "x"}, "description"),
		Entry(nil, "POST", "/accounts/{acct}/toll_free_campaigns", tollFree, "description"),
		Entry(nil, "POST", "/accounts/{acct}/toll_free_campaigns", tollFree, "message_samples.0"),
		Entry(nil, "POST", "/accounts/{acct}/toll_free_campaigns", tollFree, "terms_and_conditions_url"),
		Entry(nil, "PATCH", "/phone_numbers/{pn}", M{"name": "Front desk"}, "name"),
		Entry(nil, "POST", "/accounts/{acct}/phone_numbers", M{"area_code": "415"}, "area_code"),
		Entry(nil, "POST", "/accounts/{acct}/verifications", M{"phone_number": "+14155550100"}, "phone_number"),
		Entry(nil, "POST", "/verifications/"+store.NewID(store.PrefixVerification)+"/checks", M{"code": "123456"}, "code"),
	)

	It("refuses a NUL character in a metadata key without echoing the key, and stores nothing", func() {
		before := projectRows(t.ProjectID)
		r := t.post("/accounts/"+ids["{acct}"]+"/contacts", M{"phone_number": "+14155550100", "metadata": M{"a\x00b": "x"}})
		Expect(r).To(HaveFieldError("metadata"))
		Expect(detailOf(r, "metadata")).To(ContainElement("must not contain NUL characters in its keys"))
		Expect(projectRows(t.ProjectID)).To(Equal(before))
	})

	DescribeTable("refuses a NUL character or bytes that are not UTF-8 in a parameter with 422 naming it",
		func(method, path, field, message string, headers ...string) {
			before := projectRows(t.ProjectID)
			var body any
			if method == http.MethodPost {
				body = M{"name": "Acme"}
			}
			r := t.request(method, fill(path).(string), body, headers...)
			Expect(r).To(HaveFieldError(field), r.String())
			Expect(detailOf(r, field)).To(ContainElement(message))
			Expect(projectRows(t.ProjectID)).To(Equal(before), "nothing stored")
		},
		Entry("a path parameter", "GET", "/messages/msg_%00", "id", "must not contain NUL characters"),
		Entry("a path parameter of a PATCH", "PATCH", "/contacts/ctc%00", "id", "must not contain NUL characters"),
		Entry("a path parameter that is not UTF-8", "GET", "/contacts/%ff%fe", "id", "must be UTF-8"),
		Entry("a query parameter", "GET", "/accounts/{acct}/messages?conversation_id=cnv_%00", "conversation_id", "must not contain NUL characters"),
		Entry("a cursor", "GET", "/accounts?after=%00", "after", "must not contain NUL characters"),
		Entry("a query parameter that is not UTF-8", "GET", "/accounts/{acct}/contacts?before=%c0%af", "before", "must be UTF-8"),
		Entry("the Idempotency-Key header", "POST", "/accounts", "Idempotency-Key", "must not contain NUL characters", "Idempotency-Key", "key\x00"),
	)

	DescribeTable("refuses a JSON body that is not UTF-8 or escapes a lone surrogate with 400 invalid_json, and stores nothing",
		func(body string) {
			before := projectRows(t.ProjectID)
			Expect(t.post("/accounts", body)).To(HaveError(http.StatusBadRequest, "invalid_json"))
			Expect(t.post("/accounts/"+ids["{acct}"]+"/contacts", strings.Replace(body, `"name"`, `"phone_number":"+14155550100","first_name"`, 1))).
				To(HaveError(http.StatusBadRequest, "invalid_json"))
			Expect(projectRows(t.ProjectID)).To(Equal(before), "nothing stored")
		},
		Entry("an invalid byte", "{\"name\":\"Ac\xffme\"}"),
		Entry("an invalid byte in a key", "{\"name\":\"Acme\",\"meta\xfe\":1}"),
		Entry("an overlong encoding", "{\"name\":\"\xc0\xaf\"}"),
		Entry("a truncated sequence", "{\"name\":\"Acme \xe2\x82\"}"),
		Entry("an encoded surrogate", "{\"name\":\"\xed\xa0\x80\"}"),
		Entry("a lone high surrogate escape", `{"name":"Acme \ud800"}`),
		Entry("a lone low surrogate escape", `{"name":"\udc00 Acme"}`),
		Entry("a high surrogate followed by a letter", `{"name":"\ud800\u0041"}`),
		Entry("a reversed pair", `{"name":"\udc00\ud800"}`),
		Entry("a high surrogate at the end", `{"name":"Acme\uD83D"}`),
	)

	It("keeps escaped surrogate pairs, escaped backslashes and other control characters", func() {
		r := t.post("/accounts", `{"name":"Acme \ud83d\ude00 \\ud800 \u0001\t"}`)
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		Expect(r.JSON()).To(HaveKeyWithValue("name", "Acme 😀 \\ud800 \x01\t"))
	})
})
