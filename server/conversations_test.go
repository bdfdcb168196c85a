package server_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Conversations", func() {
	var (
		t    *tenant
		acct string
	)
	BeforeEach(func() {
		t = newTenant()
		acct = t.createAccount("Acme Dental")
	})

	It("lists one conversation per (number, contact) pair, newest first, and retrieves each", func() {
		_, main := t.addNumber(acct, sendable)
		_, second := t.addNumber(acct, sendable)
		a := t.send(acct, map[string]any{"to": "+14155550400", "from": main, "body": "1"})
		t.send(acct, map[string]any{"to": "+14155550400", "from": main, "body": "2"})
		b := t.send(acct, map[string]any{"to": "+14155550400", "from": second, "body": "3"})
		c := t.send(acct, map[string]any{"to": "+14155550401", "from": main, "body": "4"})
		id := func(m map[string]any) any { return m["conversation"].(map[string]any)["id"] }
		list := t.get("/accounts/" + acct + "/conversations").JSON()
		Expect(list["data"]).To(HaveExactElements(HaveKeyWithValue("id", id(c)), HaveKeyWithValue("id", id(b)), HaveKeyWithValue("id", id(a))))
		Expect(list["pagination"]).To(Equal(map[string]any{"next_cursor": nil, "previous_cursor": nil}))

		r := t.get("/conversations/" + id(b).(string))
		Expect(r).To(HaveStatus(http.StatusOK))
		Expect(r.JSON()).To(SatisfyAll(
			HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", "+14155550400")),
			HaveKeyWithValue("phone_number", SatisfyAll(HaveKeyWithValue("number", second), HaveKeyWithValue("type", "local"))),
		))
		Expect(t.events("conversation.created")).To(HaveLen(3))
	})

	It("answers 404 for a conversation or a list of another project", func() {
		_, n := t.addNumber(acct, sendable)
		m := t.send(acct, map[string]any{"to": "+14155550402", "from": n, "body": "x"})
		other := newTenant()
		Expect(other.get("/conversations/" + m["conversation"].(map[string]any)["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(other.get("/accounts/" + acct + "/conversations")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/conversations/" + store.NewID("cnv"))).To(HaveError(http.StatusNotFound, "not_found"))
	})
})
