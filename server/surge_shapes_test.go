package server_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Surge's types make some fields optional but not nullable: a typed client (the Go, Kotlin or
// Python models generated from Surge's spec) rejects a null there. These specs show they are
// left out when unset, wherever the resource appears.
var _ = Describe("Fields Surge types as optional, never null", func() {
	noNames := SatisfyAll(Not(HaveKey("email")), Not(HaveKey("first_name")), Not(HaveKey("last_name")))

	It("leaves a contact's unset email and names out, in contacts, messages, conversations and events", func() {
		t, acct, _, _ := newSendingAccount()
		handset := newHandset()
		m := t.send(acct, map[string]any{"conversation": map[string]any{"contact": map[string]any{"phone_number": handset}}, "body": "Hi"})
		Expect(m["conversation"]).To(HaveKeyWithValue("contact", noNames))
		Expect(m).To(HaveKeyWithValue("blast_id", BeNil()), "a message's blast_id is string or null in Surge's Message")

		conversation := m["conversation"].(map[string]any)["id"].(string)
		contact := m["conversation"].(map[string]any)["contact"].(map[string]any)["id"].(string)
		Expect(t.get("/contacts/" + contact).JSON()).To(noNames)
		Expect(t.get("/conversations/" + conversation).JSON()).To(HaveKeyWithValue("contact", noNames))
		Expect(t.get("/messages/" + m["id"].(string)).JSON()["conversation"]).To(HaveKeyWithValue("contact", noNames))

		t.awaitStatus(m["id"].(string), "delivered")
		for _, typ := range []string{"message.sent", "message.delivered"} {
			data := t.eventsFor(typ, m["id"].(string))
			Expect(data).To(HaveLen(1), typ)
			Expect(data[0]).To(Not(HaveKey("blast_id")), "%s: blast_id is absent, not null, in Surge's event types", typ)
			Expect(data[0]["conversation"]).To(HaveKeyWithValue("contact", noNames), typ)
		}
		Expect(t.events("conversation.created")).To(ContainElement(HaveKeyWithValue("contact", noNames)))
	})

	It("leaves an unnamed blast's name out", func() {
		t, acct, _, number := newSendingAccount()
		r := t.post("/accounts/"+acct+"/blasts", map[string]any{"from": number, "to": []string{newHandset()}, "body": "Hi"})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		b := r.JSON()
		Expect(b).NotTo(HaveKey("name"))
		Expect(t.get("/blasts/" + b["id"].(string)).JSON()).NotTo(HaveKey("name"))

		r = t.post("/accounts/"+acct+"/blasts", map[string]any{"from": number, "to": []string{newHandset()}, "body": nil,
			"attachments": []map[string]any{{"url": "https://example.com/a.png"}}})
		Expect(r).To(HaveStatus(http.StatusCreated), "a null body is none, as Surge's BlastCreateParams allows: %s", r.String())
		Expect(r.JSON()).To(HaveKeyWithValue("body", BeNil()))
	})
})

var _ = Describe("Parameters the Surge SDKs send", func() {
	It("creates a contact with outbound_disabled, and a send that would create one so refuses and creates nothing", func() {
		t, acct, _, _ := newSendingAccount()
		c := t.post("/accounts/"+acct+"/contacts", map[string]any{"phone_number": newHandset(), "outbound_disabled": true})
		Expect(c).To(HaveStatus(http.StatusCreated), c.String())
		Expect(c.JSON()).To(HaveKeyWithValue("outbound_disabled", true))

		handset := newHandset()
		r := t.post("/accounts/"+acct+"/messages", map[string]any{"body": "Hi", "conversation": map[string]any{
			"contact": map[string]any{"phone_number": handset, "outbound_disabled": true}}})
		Expect(r).To(HaveError(http.StatusUnprocessableEntity, "outbound_disabled"))
		Expect(t.get("/accounts/" + acct + "/contacts").JSON()["data"]).NotTo(ContainElement(HaveKeyWithValue("phone_number", handset)))
		m := t.send(acct, map[string]any{"body": "Hi", "conversation": map[string]any{
			"contact": map[string]any{"phone_number": handset, "outbound_disabled": false}}})
		Expect(m["conversation"]).To(HaveKeyWithValue("contact", HaveKeyWithValue("outbound_disabled", false)))
	})

	It("sets a phone number's metadata with PATCH, and takes a PATCH without a body as no change", func() {
		t, _, numberID, _ := newSendingAccount()
		r := t.patch("/phone_numbers/"+numberID, map[string]any{"metadata": map[string]any{"store": "Downtown"}})
		Expect(r).To(HaveStatus(http.StatusOK), r.String())
		Expect(r.JSON()).To(HaveKeyWithValue("metadata", map[string]any{"store": "Downtown"}))
		before := t.get("/phone_numbers/" + numberID).JSON()
		Expect(before).To(HaveKeyWithValue("metadata", map[string]any{"store": "Downtown"}))

		r = t.request(http.MethodPatch, "/phone_numbers/"+numberID, nil)
		Expect(r).To(HaveStatus(http.StatusOK), "client.phoneNumbers.update(id) sends no body: %s", r.String())
		Expect(r.JSON()).To(Equal(before))
		Expect(t.patch("/phone_numbers/"+numberID, map[string]any{})).To(HaveStatus(http.StatusOK))
		Expect(t.patch("/phone_numbers/"+numberID, map[string]any{"metadata": map[string]any{"": "x"}})).To(HaveFieldError("metadata"))
	})

	It("takes an account PATCH without a body as no change", func() {
		t := newTenant()
		acct := t.createAccount("Acme")
		before := t.get("/accounts/" + acct).JSON()
		r := t.request(http.MethodPatch, "/accounts/"+acct, nil)
		Expect(r).To(HaveStatus(http.StatusOK), "client.accounts.update(id) sends no body: %s", r.String())
		Expect(r.JSON()).To(Equal(before))
	})

	It("takes a null duration_seconds as the default 900, as the contract says", func() {
		t := newTenant()
		acct := t.createAccount("Acme")
		user := t.post("/accounts/"+acct+"/users", map[string]any{"first_name": "Mia"}).JSON()["id"].(string)
		r := t.post("/users/"+user+"/tokens", map[string]any{"duration_seconds": nil})
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		c := parseUserToken(r.JSON()["token"].(string))
		Expect(lifetime(c)).To(Equal(900 * time.Second))
	})
})
