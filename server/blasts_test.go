package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// blastIDPattern is a blast TypeID.
const blastIDPattern = `^bst_[0-7][0-9a-hjkmnp-tv-z]{25}$`

// createBlast posts a blast and expects 201.
func (t *tenant) createBlast(account string, body map[string]any) map[string]any {
	r := t.post("/accounts/"+account+"/blasts", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

// awaitBlast waits until a blast shows status and returns it.
func (t *tenant) awaitBlast(id, status string) map[string]any {
	EventuallyWithOffset(1, func() string {
		s, _ := t.get("/blasts/" + id).JSON()["status"].(string)
		return s
	}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(Equal(status), "blast %s", id)
	return t.get("/blasts/" + id).JSON()
}

// awaitDelivered waits until every recipient of a sent blast is delivered, failed or skipped, and
// returns the blast.
func (t *tenant) awaitDone(id string) map[string]any {
	t.awaitBlast(id, "sent")
	EventuallyWithOffset(1, func() int {
		c := counts(t.get("/blasts/" + id).JSON())
		return c["recipients"] - c["delivered"] - c["failed"] - c["skipped"]
	}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(BeZero(), "blast %s", id)
	return t.get("/blasts/" + id).JSON()
}

// counts picks a blast's progress counts.
func counts(b map[string]any) map[string]int {
	out := map[string]int{}
	for _, k := range []string{"recipients", "queued", "sent", "delivered", "failed", "skipped"} {
		out[k] = int(b[k].(float64))
	}
	return out
}

// blastMessageTo returns the id of the message a handset got from the simulated carrier.
func blastMessageTo(handset string) string {
	entries := outbox(handset)
	ExpectWithOffset(1, entries).To(HaveLen(1), "exactly one message to %s", handset)
	return entries[0].Reference
}

var _ = Describe("Blasts", func() {
	var (
		t    *tenant
		acct string
		from string
	)
	BeforeEach(func() {
		t, acct, _, from = newSendingAccount()
	})

	Describe("POST /accounts/{account_id}/blasts", func() {
		It("sends once to each distinct number among numbers, contacts and audiences, with blast_id, outside the conversation's thread", func() {
			h1, h2, h3 := newHandset(), newHandset(), newHandset()
			c2 := t.createContactIn(acct, map[string]any{"phone_number": h2})["id"].(string)
			c3 := t.createContactIn(acct, map[string]any{"phone_number": h3})["id"].(string)
			aud := t.createAudience(acct, "VIP")
			t.addMember(aud, c2)
			t.addMember(aud, c3)

			b := t.createBlast(acct, map[string]any{"from": from, "name": "Spring sale", "body": "20% off this week. Reply STOP to opt out.",
				"to": []string{h1, h1, c2, h2, aud}})
			Expect(b).To(SatisfyAll(HaveKeyWithValue("id", MatchRegexp(blastIDPattern)), HaveKeyWithValue("name", "Spring sale"),
				HaveKeyWithValue("body", "20% off this week. Reply STOP to opt out."), HaveKeyWithValue("attachments", BeEmpty()),
				HaveKeyWithValue("status", "sending"), HaveKeyWithValue("send_at", Not(BeEmpty())), HaveKeyWithValue("created_at", Not(BeEmpty())),
				HaveKeyWithValue("skipped", BeNumerically("==", 0))))
			id := b["id"].(string)

			done := t.awaitDone(id)
			Expect(counts(done)).To(Equal(map[string]int{"recipients": 3, "queued": 0, "sent": 0, "delivered": 3, "failed": 0, "skipped": 0}))

			for _, h := range []string{h1, h2, h3} {
				msgID := blastMessageTo(h)
				m := t.get("/messages/" + msgID).JSON()
				Expect(m).To(SatisfyAll(HaveKeyWithValue("blast_id", id), HaveKeyWithValue("status", "delivered"),
					HaveKeyWithValue("body", "20% off this week. Reply STOP to opt out.")))
				conv := m["conversation"].(map[string]any)
				Expect(conv["id"]).To(MatchRegexp(`^cnv_`))
				Expect(conv["contact"]).To(HaveKeyWithValue("phone_number", h))
				Expect(conv["phone_number"]).To(HaveKeyWithValue("number", from))
				thread := memberIDs(t.get("/accounts/" + acct + "/messages?conversation_id=" + conv["id"].(string)))
				Expect(thread).NotTo(ContainElement(msgID), "blast messages are not threaded into the conversation")
				Expect(t.get("/conversations/" + conv["id"].(string))).To(HaveStatus(http.StatusOK))
			}
			Expect(t.eventsFor("message.delivered", blastMessageTo(h1))).To(ConsistOf(HaveKeyWithValue("blast_id", id)))
			contacts := t.get("/accounts/" + acct + "/contacts").JSON()["data"]
			Expect(contacts).To(ContainElement(HaveKeyWithValue("phone_number", h1)), "a number without a contact gets one")
		})

		It("skips and counts opted-out, outbound-disabled and blocked recipients and never sends to them", func() {
			ok, opted, disabled, blocked := newHandset(), newHandset(), newHandset(), newHandset()
			o := t.createContactIn(acct, map[string]any{"phone_number": opted})["id"].(string)
			Expect(st.SetContactOptedOut(context.Background(), o, true, time.Now())).To(Succeed())
			d := t.createContactIn(acct, map[string]any{"phone_number": disabled})["id"].(string)
			Expect(t.patch("/contacts/"+d, map[string]any{"outbound_disabled": true})).To(HaveStatus(http.StatusOK))
			now := time.Now().UTC()
			Expect(st.BlockNumber(context.Background(), store.BlockedNumber{AccountID: acct, PhoneNumber: blocked,
				Reason: "invalid_mobile_number", BlockedAt: now, RetryAfter: now.Add(time.Hour)})).To(Succeed())

			b := t.createBlast(acct, map[string]any{"body": "Hello", "to": []string{ok, o, disabled, blocked}})
			done := t.awaitDone(b["id"].(string))
			Expect(counts(done)).To(Equal(map[string]int{"recipients": 4, "queued": 0, "sent": 0, "delivered": 1, "failed": 0, "skipped": 3}))
			Expect(outbox(ok)).To(HaveLen(1))
			for _, h := range []string{opted, disabled, blocked} {
				Expect(outbox(h)).To(BeEmpty(), h)
			}
		})

		DescribeTable("refuses recipients that are not the account's with 422, storing and sending nothing",
			func(recipient func() string) {
				h := newHandset()
				r := t.post("/accounts/"+acct+"/blasts", map[string]any{"body": "x", "to": []string{h, recipient()}})
				Expect(r).To(HaveFieldError("to"))
				Expect(t.get("/accounts/" + acct + "/blasts").JSON()["data"]).To(BeEmpty())
				Consistently(func() []string { return memberIDs(t.get("/accounts/" + acct + "/messages")) }).
					WithTimeout(300 * time.Millisecond).Should(BeEmpty())
				Expect(outbox(h)).To(BeEmpty())
			},
			Entry("another project's contact", func() string {
				o := newTenant()
				return o.createContactIn(o.createAccount("Theirs"), map[string]any{"phone_number": newHandset()})["id"].(string)
			}),
			Entry("another project's audience", func() string {
				o := newTenant()
				return o.createAudience(o.createAccount("Theirs"), "Theirs")
			}),
			Entry("a sibling account's contact", func() string {
				return t.createContactIn(t.createAccount("Sibling"), map[string]any{"phone_number": newHandset()})["id"].(string)
			}),
			Entry("a sibling account's audience", func() string { return t.createAudience(t.createAccount("Sibling"), "Sibling") }),
			Entry("a contact id that does not exist", func() string { return store.NewID("ctc") }),
		)

		It("accepts the deprecated contacts and segments fields, and checks them the same way", func() {
			h1, h2 := newHandset(), newHandset()
			c1 := t.createContactIn(acct, map[string]any{"phone_number": h1})["id"].(string)
			c2 := t.createContactIn(acct, map[string]any{"phone_number": h2})["id"].(string)
			aud := t.createAudience(acct, "Old style")
			t.addMember(aud, c2)
			r := t.post("/accounts/"+acct+"/blasts", map[string]any{"body": "Deprecated fields", "contacts": []string{c1}, "segments": []string{aud}})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			Expect(r.Header.Get("Deprecation")).To(Equal("@1795478400"), "announced as RFC 9745 has it")
			b := r.JSON()
			Expect(counts(t.awaitDone(b["id"].(string)))).To(HaveKeyWithValue("delivered", 2))
			Expect(outbox(h1)).To(HaveLen(1))
			Expect(outbox(h2)).To(HaveLen(1))

			o := newTenant()
			theirs := o.createContactIn(o.createAccount("Theirs"), map[string]any{"phone_number": newHandset()})["id"].(string)
			Expect(t.post("/accounts/"+acct+"/blasts", map[string]any{"body": "x", "contacts": []string{theirs}})).To(HaveError(http.StatusUnprocessableEntity, "validation_error"))
			Expect(t.post("/accounts/"+acct+"/blasts", map[string]any{"body": "x", "segments": []string{"vip"}})).To(HaveFieldError("segments"))
		})

		It("expands audiences when the blast is sent, not when it is created", func() {
			early, late, gone := newHandset(), newHandset(), newHandset()
			aud := t.createAudience(acct, "Members")
			t.addMember(aud, t.createContactIn(acct, map[string]any{"phone_number": early})["id"].(string))
			goneID := t.createContactIn(acct, map[string]any{"phone_number": gone})["id"].(string)
			t.addMember(aud, goneID)
			b := t.createBlast(acct, map[string]any{"body": "Later", "to": []string{aud}, "send_at": clock.Now().Add(2 * time.Second).Format(time.RFC3339Nano)})
			Expect(b).To(SatisfyAll(HaveKeyWithValue("status", "scheduled"), HaveKeyWithValue("recipients", BeNumerically("==", 0))))

			t.addMember(aud, t.createContactIn(acct, map[string]any{"phone_number": late})["id"].(string))
			Expect(t.delete("/audiences/" + aud + "/contacts/" + goneID)).To(HaveStatus(http.StatusOK))

			done := t.awaitDone(b["id"].(string))
			Expect(counts(done)).To(SatisfyAll(HaveKeyWithValue("recipients", 2), HaveKeyWithValue("delivered", 2)))
			Expect(outbox(early)).To(HaveLen(1))
			Expect(outbox(late)).To(HaveLen(1), "added after the blast was created, before it was sent")
			Expect(outbox(gone)).To(BeEmpty(), "removed before the blast was sent")
		})

		It("reports failures in the progress counts", func() {
			b := t.createBlast(acct, map[string]any{"body": "x", "to": []string{newHandset(), "+15005550003"}})
			Expect(counts(t.awaitDone(b["id"].(string)))).To(SatisfyAll(HaveKeyWithValue("delivered", 1), HaveKeyWithValue("failed", 1)))
		})

		DescribeTable("refuses a malformed blast with 422 validation_error",
			func(body map[string]any, field string) {
				r := t.post("/accounts/"+acct+"/blasts", body)
				if field == "" {
					Expect(r).To(HaveError(http.StatusUnprocessableEntity, "validation_error"))
					return
				}
				Expect(r).To(HaveFieldError(field))
			},
			Entry("no recipient", map[string]any{"body": "x"}, "to"),
			Entry("an empty to", map[string]any{"body": "x", "to": []string{}}, "to"),
			Entry("neither body nor attachments", map[string]any{"to": []string{"+14155550123"}}, "body"),
			Entry("a recipient that is neither a number nor an id", map[string]any{"body": "x", "to": []string{"4155550123"}}, ""),
			Entry("a message id as a recipient", map[string]any{"body": "x", "to": []string{store.NewID("msg")}}, ""),
			Entry("send_at more than 60 days ahead", map[string]any{"body": "x", "to": []string{"+14155550123"}, "send_at": time.Now().Add(61 * 24 * time.Hour).Format(time.RFC3339)}, "send_at"),
			Entry("a name over 255 characters", map[string]any{"body": "x", "to": []string{"+14155550123"}, "name": strings.Repeat("n", 256)}, "name"),
			Entry("an unknown field", map[string]any{"body": "x", "to": []string{"+14155550123"}, "priority": "high"}, "priority"),
		)

		It("applies the sender rules of a send", func() {
			bare := t.createAccount("Bare")
			Expect(t.post("/accounts/"+bare+"/blasts", map[string]any{"body": "x", "to": []string{"+14155550123"}})).
				To(HaveError(http.StatusUnprocessableEntity, "no_phone_number"))
			_, unattached := t.addNumber(acct, numberSetup{Type: store.NumberLocal})
			Expect(t.post("/accounts/"+acct+"/blasts", map[string]any{"from": unattached, "body": "x", "to": []string{"+14155550123"}})).
				To(HaveError(http.StatusUnprocessableEntity, "campaign_required"))
			Expect(t.post("/accounts/"+acct+"/blasts", map[string]any{"body": strings.Repeat("a", 1601), "to": []string{"+14155550123"}})).
				To(HaveError(http.StatusUnprocessableEntity, "message_too_long"))
			Expect(t.delete("/accounts/" + acct)).To(HaveStatus(http.StatusOK))
			Expect(t.post("/accounts/"+acct+"/blasts", map[string]any{"body": "x", "to": []string{"+14155550123"}})).
				To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
		})

		It("refuses a demo key with 403 demo_api_key", func() {
			_, demo, err := st.CreateAPIKey(context.Background(), t.ProjectID, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(t.withKey(demo).post("/accounts/"+acct+"/blasts", map[string]any{"body": "x", "to": []string{"+14155550123"}})).
				To(HaveError(http.StatusForbidden, "demo_api_key"))
		})

		It("accepts 100,000 numbers in one request (a body over 1 MiB); its speed is measured by `make bench -scenario blast`", func() {
			to := make([]string, 100_000)
			for i := range to {
				to[i] = fmt.Sprintf("+1777%07d", i)
			}
			body := map[string]any{"body": "Big sale", "to": to, "send_at": clock.Now().Add(time.Hour).Format(time.RFC3339)}
			b := t.createBlast(acct, body)
			Expect(b).To(HaveKeyWithValue("status", "scheduled"))
			Expect(t.post("/blasts/"+b["id"].(string)+"/cancel", nil)).To(HaveStatus(http.StatusOK))
		})

		It("shortens each recipient's links with settings.link_shortening, one tracked link per message", func() {
			h1, h2 := newHandset(), newHandset()
			b := t.createBlast(acct, map[string]any{"from": from, "body": "Offer: https://acme.example/spring",
				"to": []string{h1, h2}, "settings": map[string]any{"link_shortening": "enabled"}})
			t.awaitDone(b["id"].(string))
			var codes []string
			for _, h := range []string{h1, h2} {
				m := t.get("/messages/" + blastMessageTo(h)).JSON()
				match := shortLink.FindStringSubmatch(m["body"].(string))
				Expect(match).To(HaveLen(2), "body: %v", m["body"])
				codes = append(codes, match[1])
				Expect(t.withKey("").get("/l/" + match[1]).Header.Get("Location")).To(Equal("https://acme.example/spring"))
			}
			Expect(codes[0]).NotTo(Equal(codes[1]))
			Expect(t.events("link.followed")).To(HaveLen(2))
		})

		It("refuses a body over 4 MiB with 413 request_too_large", func() {
			to := make([]string, 300_000)
			for i := range to {
				to[i] = fmt.Sprintf("+1777%07d", i)
			}
			Expect(t.post("/accounts/"+acct+"/blasts", map[string]any{"body": "x", "to": to})).
				To(HaveError(http.StatusRequestEntityTooLarge, "request_too_large"))
		})
	})

	Describe("retrieving, listing and canceling", func() {
		It("lists an account's blasts newest first with their progress, and answers 404 for another project's", func() {
			first := t.createBlast(acct, map[string]any{"body": "one", "to": []string{newHandset()}})
			second := t.createBlast(acct, map[string]any{"body": "two", "to": []string{newHandset()}, "send_at": clock.Now().Add(time.Hour).Format(time.RFC3339)})
			t.awaitDone(first["id"].(string))
			page := t.get("/accounts/" + acct + "/blasts").JSON()["data"].([]any)
			Expect(page).To(HaveLen(2))
			Expect(page[0]).To(SatisfyAll(HaveKeyWithValue("id", second["id"]), HaveKeyWithValue("status", "scheduled")))
			Expect(page[1]).To(SatisfyAll(HaveKeyWithValue("id", first["id"]), HaveKeyWithValue("delivered", BeNumerically("==", 1))))

			o := newTenant()
			Expect(o.get("/blasts/" + first["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(o.post("/blasts/"+second["id"].(string)+"/cancel", nil)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(o.get("/accounts/" + acct + "/blasts")).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("cancels a scheduled blast, which then sends nothing; a canceled or sent blast is a 409 conflict", func() {
			h := newHandset()
			b := t.createBlast(acct, map[string]any{"body": "x", "to": []string{h}, "send_at": clock.Now().Add(time.Second).Format(time.RFC3339Nano)})
			r := t.post("/blasts/"+b["id"].(string)+"/cancel", nil)
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(HaveKeyWithValue("status", "canceled"))
			time.Sleep(1500 * time.Millisecond)
			Expect(outbox(h)).To(BeEmpty())
			Expect(t.get("/blasts/" + b["id"].(string)).JSON()).To(SatisfyAll(HaveKeyWithValue("status", "canceled"), HaveKeyWithValue("recipients", BeNumerically("==", 0))))
			Expect(t.post("/blasts/"+b["id"].(string)+"/cancel", nil)).To(HaveError(http.StatusConflict, "conflict"))

			sent := t.createBlast(acct, map[string]any{"body": "x", "to": []string{newHandset()}})
			t.awaitBlast(sent["id"].(string), "sent")
			Expect(t.post("/blasts/"+sent["id"].(string)+"/cancel", nil)).To(HaveError(http.StatusConflict, "conflict"))
		})
	})
})
