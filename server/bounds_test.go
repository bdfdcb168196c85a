package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// huge is the 100,000 characters that string fields used to accept.
var huge = strings.Repeat("x", 100_000)

// hugeURL is a well-formed URL of 100,000 characters, so that only its length is wrong.
var hugeURL = "https://example.com/" + huge

// hugeEmail is a well-formed email address of 100,000 characters.
var hugeEmail = huge + "@example.com"

// withField returns body with the value at a dotted path (numbers index arrays) replaced.
func withField(body map[string]any, path string, value any) map[string]any {
	// A deep copy through JSON, so entries never share maps.
	var out map[string]any
	b, _ := json.Marshal(body)
	_ = json.Unmarshal(b, &out)
	var node any = out
	keys := strings.Split(path, ".")
	for i, k := range keys {
		last := i == len(keys)-1
		switch n := node.(type) {
		case map[string]any:
			if last {
				n[k] = value
				return out
			}
			if n[k] == nil {
				if _, err := strconv.Atoi(keys[i+1]); err == nil {
					n[k] = []any{map[string]any{}}
				} else {
					n[k] = map[string]any{}
				}
			}
			node = n[k]
		case []any:
			j, _ := strconv.Atoi(k)
			if last {
				n[j] = value
				return out
			}
			node = n[j]
		}
	}
	return out
}

var _ = Describe("String, array and metadata bounds", func() {
	var (
		t       *tenant
		account string
	)
	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("Acme")
	})

	const (
		someUser    = "usr_01jtp4dsdq6de56aa0tfm2e5b3"
		someNumber  = "pn_01jtp4dsdq6de56aa0tfm2e5b3"
		someContact = "ctc_01jtp4dsdq6de56aa0tfm2e5b3"
	)
	send := func() map[string]any { return map[string]any{"to": "+14155550100", "body": "Hi"} }
	contact := func() map[string]any { return map[string]any{"phone_number": "+14155550100"} }
	user := func() map[string]any { return map[string]any{"first_name": "Mia"} }
	blast := func() map[string]any { return map[string]any{"to": []string{"+14155550100"}, "body": "Hi"} }

	// Each entry is a field that accepted 100,000 characters before it had a maxLength.
	DescribeTable("refuses 100,000 characters with 422 validation_error naming the field",
		func(method, path string, body func() map[string]any, field string, value string) {
			p := strings.ReplaceAll(path, "{account}", account)
			r := t.request(method, p, withField(body(), field, value))
			Expect(r).To(HaveFieldError(field))
			Expect(r.JSON()["error"].(map[string]any)["detail"].(map[string]any)[field]).
				To(ContainElement(HavePrefix("maximum string length is")), r.String())
		},
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.identifier", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.registered_name", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.stock_symbol", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.website", hugeURL),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.email", hugeEmail),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.address.line1", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.address.line2", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.address.locality", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.address.name", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.address.postal_code", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.address.region", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.contact.first_name", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.contact.last_name", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.contact.title_other", huge),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "organization.contact.email", hugeEmail),
		Entry(nil, "POST", "/accounts", func() map[string]any { return map[string]any{"name": "Acme"} }, "time_zone", huge),
		Entry(nil, "POST", "/accounts/{account}/users", user, "last_name", huge),
		Entry(nil, "PATCH", "/users/"+someUser, user, "first_name", huge),
		Entry(nil, "POST", "/accounts/{account}/users", user, "photo_url", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/contacts", contact, "first_name", huge),
		Entry(nil, "PATCH", "/contacts/"+someContact, contact, "last_name", huge),
		Entry(nil, "POST", "/accounts/{account}/contacts", contact, "email", hugeEmail),
		Entry(nil, "POST", "/accounts/{account}/messages", send, "attachments.0.url", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/messages", func() map[string]any {
			return map[string]any{"conversation": map[string]any{"contact": contact()}, "body": "Hi"}
		}, "conversation.contact.first_name", huge),
		Entry(nil, "POST", "/accounts/{account}/messages", send, "metadata.crm_id", huge),
		Entry(nil, "POST", "/accounts/{account}/blasts", blast, "attachments.0.url", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/blasts", blast, "name", huge),
		Entry(nil, "PATCH", "/phone_numbers/"+someNumber, func() map[string]any { return map[string]any{} }, "name", huge),
		Entry(nil, "POST", "/accounts/{account}/audiences", func() map[string]any { return map[string]any{} }, "name", huge),
		Entry(nil, "POST", "/accounts/{account}/campaigns", campaignBody, "description", huge),
		Entry(nil, "POST", "/accounts/{account}/campaigns", campaignBody, "message_samples.0", huge),
		Entry(nil, "POST", "/accounts/{account}/campaigns", campaignBody, "consent_flow", huge),
		Entry(nil, "POST", "/accounts/{account}/campaigns", campaignBody, "privacy_policy_url", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/campaigns", campaignBody, "terms_and_conditions_url", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/campaigns", campaignBody, "link_sample", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/campaigns", func() map[string]any { return map[string]any{} }, "tcr_id", huge),
		Entry(nil, "POST", "/accounts/{account}/toll_free_campaigns", func() map[string]any { return tollFreeBody(someNumber) }, "description", huge),
		Entry(nil, "POST", "/accounts/{account}/toll_free_campaigns", func() map[string]any { return tollFreeBody(someNumber) }, "message_samples.0", huge),
		Entry(nil, "POST", "/accounts/{account}/toll_free_campaigns", func() map[string]any { return tollFreeBody(someNumber) }, "privacy_policy_url", hugeURL),
		Entry(nil, "POST", "/accounts/{account}/toll_free_campaigns", func() map[string]any { return tollFreeBody(someNumber) }, "terms_and_conditions_url", hugeURL),
	)

	It("takes a value as long as the cap", func() {
		r := t.post("/accounts", map[string]any{"name": strings.Repeat("n", 255), "organization": map[string]any{
			"registered_name": strings.Repeat("r", 255), "identifier": strings.Repeat("9", 64),
			"website": "https://example.com/" + strings.Repeat("p", 2048-20),
			"address": map[string]any{"line1": strings.Repeat("l", 255), "postal_code": strings.Repeat("0", 32)},
		}})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		r = t.post("/accounts/"+account+"/contacts", map[string]any{"phone_number": "+14155550100",
			"metadata": map[string]any{strings.Repeat("k", 40): strings.Repeat("v", 500)}})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
	})

	It("refuses a body over 1600 characters with 422 message_too_long, the contract's maxLength", func() {
		r := t.post("/accounts/"+account+"/messages", map[string]any{"to": "+14155550100", "body": strings.Repeat("a", 1601)})
		Expect(r).To(HaveError(http.StatusUnprocessableEntity, "message_too_long"))
		r = t.post("/accounts/"+account+"/blasts", map[string]any{"to": []string{"+14155550100"}, "body": huge})
		Expect(r).To(HaveError(http.StatusUnprocessableEntity, "message_too_long"))
	})

	It("names every field when a long body comes with other mistakes", func() {
		r := t.post("/accounts/"+account+"/messages", map[string]any{"to": "+14155550100", "body": huge, "metadata": 5})
		Expect(r).To(SatisfyAll(HaveFieldError("body"), HaveFieldError("metadata")))
	})

	DescribeTable("refuses a metadata key over 40 characters, or empty, naming the metadata object",
		func(path string, body func(key string) map[string]any, field string) {
			p := strings.ReplaceAll(path, "{account}", account)
			for _, key := range []string{strings.Repeat("k", 41), huge, ""} {
				Expect(t.request(http.MethodPost, p, body(key))).To(HaveFieldError(field))
			}
		},
		Entry(nil, "/accounts/{account}/contacts", func(k string) map[string]any {
			return map[string]any{"phone_number": "+14155550100", "metadata": map[string]any{k: "v"}}
		}, "metadata"),
		Entry(nil, "/accounts/{account}/users", func(k string) map[string]any {
			return map[string]any{"first_name": "Mia", "metadata": map[string]any{k: "v"}}
		}, "metadata"),
		Entry(nil, "/accounts/{account}/messages", func(k string) map[string]any {
			return map[string]any{"to": "+14155550100", "body": "Hi", "metadata": map[string]any{k: "v"}}
		}, "metadata"),
		Entry(nil, "/accounts/{account}/messages", func(k string) map[string]any {
			return map[string]any{"body": "Hi", "conversation": map[string]any{"contact": map[string]any{
				"phone_number": "+14155550100", "metadata": map[string]any{k: "v"}}}}
		}, "conversation.contact.metadata"),
	)

	It("refuses more than 50 metadata keys and arrays over their maxItems", func() {
		md := map[string]any{}
		for i := range 51 {
			md["k"+strconv.Itoa(i)] = "v"
		}
		Expect(t.post("/accounts/"+account+"/contacts", map[string]any{"phone_number": "+14155550100", "metadata": md})).
			To(HaveFieldError("metadata"))
		urls := make([]map[string]any, 11)
		for i := range urls {
			urls[i] = map[string]any{"url": "https://example.com/a.png"}
		}
		Expect(t.post("/accounts/"+account+"/messages", map[string]any{"to": "+14155550100", "attachments": urls})).
			To(HaveFieldError("attachments"))
	})
})
