package server_test

import (
	"context"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The group commit of sends (service/send_batch.go): concurrent sends share one read and one
// write. Batches form only while a flush is busy, so each spec sends in waves of concurrent
// requests until the batch-size histogram shows a batch of more than one send; what the specs
// check of every wave holds however the sends were grouped.
var _ = Describe("Concurrent sends", func() {
	const maxWaves = 10
	var (
		t    *tenant
		acct string
		from string
	)
	BeforeEach(func() {
		t, acct, _, from = newSendingAccount()
	})

	// shared counts the flushes that held more than one send so far.
	shared := func() float64 {
		m := scrape(api)
		return metricValue(m, "switchboard_send_batch_size_count") - metricValue(m, `switchboard_send_batch_size_bucket{le="1"}`)
	}
	// wave posts the bodies to their accounts all at once and returns the responses in order.
	wave := func(accounts []string, bodies []map[string]any) []*response {
		out := make([]*response, len(bodies))
		var wg sync.WaitGroup
		for i := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = t.post("/accounts/"+accounts[i]+"/messages", bodies[i])
			}()
		}
		wg.Wait()
		return out
	}
	repeat := func(s string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	// conversationCreated counts the conversation.created events of a conversation.
	conversationCreated := func(id string) int {
		n := 0
		for _, e := range t.events("conversation.created") {
			if e["id"] == id {
				n++
			}
		}
		return n
	}

	It("gives every send its message, its recipient's one contact and conversation, and one conversation.created per conversation", func() {
		before := shared()
		const handsets = 12
		for range maxWaves {
			// Two sends to each new recipient at once, then one more to each.
			var bodies []map[string]any
			tos := make([]string, handsets)
			for i := range tos {
				tos[i] = newHandset()
				for range 2 {
					bodies = append(bodies, map[string]any{"to": tos[i], "from": from, "body": "first to " + tos[i]})
				}
			}
			first := wave(repeat(acct, len(bodies)), bodies)
			bodies = bodies[:0]
			for _, to := range tos {
				bodies = append(bodies, map[string]any{"to": to, "from": from, "body": "again to " + to})
			}
			again := wave(repeat(acct, len(bodies)), bodies)

			ids := map[string]bool{}
			for i, to := range tos {
				a, b, c := first[2*i], first[2*i+1], again[i]
				var conv, contact string
				for _, r := range []*response{a, b, c} {
					Expect(r).To(HaveStatus(http.StatusCreated), r.String())
					m := r.JSON()
					Expect(m).To(HaveKeyWithValue("status", "queued"))
					ids[m["id"].(string)] = true
					cv := m["conversation"].(map[string]any)
					k := cv["contact"].(map[string]any)
					Expect(k).To(HaveKeyWithValue("phone_number", to))
					if conv == "" {
						conv, contact = cv["id"].(string), k["id"].(string)
					}
					Expect(cv["id"]).To(Equal(conv), "one conversation per recipient")
					Expect(k["id"]).To(Equal(contact), "one contact per recipient")
					Expect(t.get("/messages/" + m["id"].(string))).To(HaveStatus(http.StatusOK))
				}
				Expect(conversationCreated(conv)).To(Equal(1), "conversation.created of %s", to)
			}
			Expect(ids).To(HaveLen(3 * handsets))
			if shared() > before {
				break
			}
		}
		Expect(shared()).To(BeNumerically(">", before), "no wave of %d concurrent sends formed a batch", 2*handsets)
	})

	It("answers each send of a batch for itself: one send's error fails no other", func() {
		ctx := context.Background()
		// An opted-out contact and one with outbound disabled, each with a conversation already.
		optedOut, disabled := newHandset(), newHandset()
		for _, to := range []string{optedOut, disabled} {
			t.send(acct, map[string]any{"to": to, "from": from, "body": "before"})
		}
		contacts := t.get("/accounts/" + acct + "/contacts?limit=100").JSON()["data"].([]any)
		for _, c := range contacts {
			c := c.(map[string]any)
			switch c["phone_number"] {
			case optedOut:
				Expect(st.SetContactOptedOut(ctx, c["id"].(string), true, time.Now())).To(Succeed())
			case disabled:
				Expect(t.patch("/contacts/"+c["id"].(string), map[string]any{"outbound_disabled": true})).To(HaveStatus(http.StatusOK))
			}
		}
		archived, _ := newSendingAccountOf(t)
		Expect(t.delete("/accounts/" + archived)).To(HaveStatus(http.StatusOK))

		before := shared()
		for range maxWaves {
			var accounts []string
			var bodies []map[string]any
			var want []func(*response)
			add := func(account string, body map[string]any, check func(*response)) {
				accounts, bodies, want = append(accounts, account), append(bodies, body), append(want, check)
			}
			refused := func(typ string) func(*response) {
				return func(r *response) { Expect(r).To(HaveError(http.StatusUnprocessableEntity, typ)) }
			}
			for range 4 {
				to := newHandset()
				add(acct, map[string]any{"to": to, "from": from, "body": "fine"}, func(r *response) {
					Expect(r).To(HaveStatus(http.StatusCreated), r.String())
					Expect(r.JSON()["conversation"]).To(HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", to)))
				})
				add(acct, map[string]any{"to": optedOut, "from": from, "body": "x"}, refused("opted_out"))
				add(acct, map[string]any{"to": disabled, "from": from, "body": "x"}, refused("outbound_disabled"))
				add(acct, map[string]any{"to": newHandset(), "from": newNumber(), "body": "x"}, refused("phone_number_not_found"))
				add(archived, map[string]any{"to": newHandset(), "body": "x"}, refused("account_archived"))
				add("acct_01jbz9v6f5e8c9t0d7m2k3h4q5", map[string]any{"to": newHandset(), "body": "x"}, func(r *response) {
					Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
				})
			}
			for i, r := range wave(accounts, bodies) {
				want[i](r)
			}
			if shared() > before {
				break
			}
		}
		Expect(shared()).To(BeNumerically(">", before), "no wave of concurrent sends formed a batch")
	})
})

// newSendingAccountOf adds to t's project an account with a number that may send.
func newSendingAccountOf(t *tenant) (acct, number string) {
	acct = t.createAccount("Batch neighbour")
	_, number = t.addNumber(acct, sendable)
	return acct, number
}
