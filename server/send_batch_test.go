package server_test

import (
	"context"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/store"
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
	// On PostgreSQL a flush writes the sends of a context it keeps from an earlier read without
	// reading it again, and its write checks the context itself: what another instance or a
	// direct update changed in between takes effect at the next send.
	It("answers a send of a context kept from an earlier one as a read would: a change made through another instance or directly in the database takes effect at the next send", func(ctx context.Context) {
		b := newAPI(server.Config{RateLimit: -1, Core: otherInstance(ctx)})
		onB := *t
		onB.api = b
		exec := func(q string, args ...any) {
			ExpectWithOffset(1, st.DB().WithContext(ctx).Exec(q, args...).Error).To(Succeed())
		}
		reads := func() float64 { return metricValue(scrape(api), `switchboard_send_batch_seconds_count{phase="read"}`) }
		send := func(to string) *response {
			return t.post("/accounts/"+acct+"/messages", map[string]any{"to": to, "from": from, "body": "hello"})
		}
		created := func(r *response) map[string]any {
			ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
			return r.JSON()["conversation"].(map[string]any)
		}
		known := newHandset()
		first := created(send(known))
		before := reads()
		again := created(send(known))
		Expect(again["id"]).To(Equal(first["id"]), "the known recipient's conversation")
		Expect(again["contact"]).To(Equal(first["contact"]))
		created(send(newHandset()))
		if st.Dialect() == store.Postgres {
			Expect(reads()).To(Equal(before), "sends of a kept context are written without a read")
		}

		// The number renamed and given metadata by a direct update that leaves updated_at alone.
		exec(`UPDATE phone_numbers SET name = 'Front desk', metadata = '{"desk":"1"}' WHERE number = ?`, from)
		pn := created(send(newHandset()))["phone_number"].(map[string]any)
		Expect(pn).To(HaveKeyWithValue("name", "Front desk"))
		Expect(pn).To(HaveKeyWithValue("metadata", map[string]any{"desk": "1"}))

		// The account archived through the other instance (which releases its numbers), then
		// brought back directly.
		Expect(onB.delete("/accounts/" + acct)).To(HaveStatus(http.StatusOK))
		Expect(send(newHandset())).To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
		exec(`UPDATE accounts SET archived_at = NULL WHERE id = ?`, acct)
		exec(`UPDATE phone_numbers SET released_at = NULL, attachment_status = ? WHERE number = ?`, store.AttachmentDone, from)
		exec(`UPDATE campaigns SET status = ? WHERE id = (SELECT campaign_id FROM phone_numbers WHERE number = ?)`, store.CampaignActive, from)
		created(send(newHandset()))
		exec(`UPDATE accounts SET archived_at = ? WHERE id = ?`, time.Now().UTC(), acct) // its number left held
		Expect(send(newHandset())).To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
		exec(`UPDATE accounts SET archived_at = NULL WHERE id = ?`, acct)
		created(send(newHandset()))

		// Quiet hours turned on directly, with a window of one minute half a day from now in UTC
		// (the recipients are in New York): the message is held as scheduled.
		now := clock.Now().UTC()
		open := (now.Hour()*60 + now.Minute() + 720) % (24 * 60)
		exec(`UPDATE accounts SET quiet_hours = TRUE, quiet_hours_start = ?, quiet_hours_end = ? WHERE id = ?`, open, (open+1)%(24*60), acct)
		r := send(newHandset())
		Expect(r).To(HaveStatus(http.StatusCreated), r.String())
		Expect(r.JSON()).To(HaveKeyWithValue("status", "scheduled"))
		exec(`UPDATE accounts SET quiet_hours = FALSE WHERE id = ?`, acct)
		created(send(newHandset()))

		// The number's campaign deactivated, then the number released, directly.
		exec(`UPDATE campaigns SET status = 'deactivated' WHERE id = (SELECT campaign_id FROM phone_numbers WHERE number = ?)`, from)
		Expect(send(newHandset())).To(HaveError(http.StatusUnprocessableEntity, "campaign_required"))
		exec(`UPDATE campaigns SET status = 'active' WHERE id = (SELECT campaign_id FROM phone_numbers WHERE number = ?)`, from)
		created(send(newHandset()))
		exec(`UPDATE phone_numbers SET released_at = ? WHERE number = ?`, time.Now().UTC(), from)
		Expect(send(newHandset())).To(HaveError(http.StatusUnprocessableEntity, "phone_number_not_found"))
		exec(`UPDATE phone_numbers SET released_at = NULL WHERE number = ?`, from)

		// The known contact opted out directly.
		exec(`UPDATE contacts SET opted_out = TRUE WHERE account_id = ? AND phone_number = ?`, acct, known)
		Expect(send(known)).To(HaveError(http.StatusUnprocessableEntity, "opted_out"))
		created(send(newHandset()))
	})
})

// newSendingAccountOf adds to t's project an account with a number that may send.
func newSendingAccountOf(t *tenant) (acct, number string) {
	acct = t.createAccount("Batch neighbour")
	_, number = t.addNumber(acct, sendable)
	return acct, number
}
