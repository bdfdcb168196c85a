package server_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

// laSeq numbers handsets in Los Angeles (area code 310), as newHandset does New York's.
var laSeq atomic.Int64

func newLAHandset() string { return fmt.Sprintf("+1310555%04d", laSeq.Add(1)) }

var _ = Describe("Quiet hours", func() {
	var (
		t      *tenant
		acct   string
		number string
	)
	newYork, err := time.LoadLocation("America/New_York")
	Expect(err).NotTo(HaveOccurred())

	// setClock moves the suite's clock to a wall-clock time in New York. The dispatch runs on the
	// same clock: a held message goes out once the clock passes its window's opening. (Events are
	// checked in the real-time spec.)
	setClock := func(local string) time.Time {
		at, err := time.ParseInLocation("2006-01-02 15:04", local, newYork)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		clock.Advance(at.Sub(clock.Now()))
		return at
	}
	quietHours := func(account string) map[string]any {
		return t.get("/accounts/" + account).JSON()["quiet_hours"].(map[string]any)
	}
	BeforeEach(func() {
		t, acct, _, number = newSendingAccount()
		r := t.patch("/accounts/"+acct, map[string]any{"quiet_hours": map[string]any{"enabled": true}})
		Expect(r).To(HaveStatus(http.StatusOK), r.String())
	})

	Describe("the account's quiet_hours", func() {
		It("is off from 08:00 to 21:00 on a new account, is set on create, and changes in part on update", func() {
			plain := t.createAccount("Plain")
			Expect(quietHours(plain)).To(Equal(map[string]any{"enabled": false, "start": "08:00", "end": "21:00"}))

			r := t.post("/accounts", map[string]any{"name": "Night owls", "quiet_hours": map[string]any{"enabled": true, "start": "09:30", "end": "20:00"}})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			id := r.JSON()["id"].(string)
			Expect(r.JSON()["quiet_hours"]).To(Equal(map[string]any{"enabled": true, "start": "09:30", "end": "20:00"}))
			Expect(quietHours(id)).To(Equal(map[string]any{"enabled": true, "start": "09:30", "end": "20:00"}))

			r = t.patch("/accounts/"+id, map[string]any{"quiet_hours": map[string]any{"end": "22:15"}})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()["quiet_hours"]).To(Equal(map[string]any{"enabled": true, "start": "09:30", "end": "22:15"}))
			r = t.patch("/accounts/"+id, map[string]any{"quiet_hours": map[string]any{"enabled": false}, "name": "Early birds"})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(quietHours(id)).To(Equal(map[string]any{"enabled": false, "start": "09:30", "end": "22:15"}), "the window is kept while off")
			r = t.patch("/accounts/"+id, map[string]any{"quiet_hours": map[string]any{"start": "22:00", "end": "06:00"}})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(quietHours(id)).To(Equal(map[string]any{"enabled": false, "start": "22:00", "end": "06:00"}), "a window may run past midnight")
		})

		DescribeTable("refuses a bad window with 422 validation_error naming the field, on create and on update, and changes nothing",
			func(qh any, field string) {
				before := quietHours(acct)
				Expect(t.patch("/accounts/"+acct, map[string]any{"quiet_hours": qh})).To(HaveFieldError(field))
				Expect(quietHours(acct)).To(Equal(before))
				Expect(t.post("/accounts", map[string]any{"name": "Refused", "quiet_hours": qh})).To(HaveFieldError(field))
			},
			Entry("a start that is not HH:MM", map[string]any{"start": "8:00"}, "quiet_hours.start"),
			Entry("an end of 24:00", map[string]any{"end": "24:00"}, "quiet_hours.end"),
			Entry("minute 60", map[string]any{"start": "07:60"}, "quiet_hours.start"),
			Entry("seconds", map[string]any{"start": "07:00:00"}, "quiet_hours.start"),
			Entry("a number", map[string]any{"start": 800}, "quiet_hours.start"),
			Entry("a start equal to the end", map[string]any{"start": "10:00", "end": "10:00"}, "quiet_hours.end"),
			Entry("a start equal to the default end", map[string]any{"start": "21:00"}, "quiet_hours.end"),
			Entry("enabled that is not a boolean", map[string]any{"enabled": "yes"}, "quiet_hours.enabled"),
			Entry("an unknown field", map[string]any{"enabled": true, "time_zone": "UTC"}, "quiet_hours.time_zone"),
			Entry("null", nil, "quiet_hours"),
			Entry("a string", "08:00-21:00", "quiet_hours"),
		)
	})

	Describe("holding messages", func() {
		It("sends inside the window, holds outside it until the recipient's 08:00 on both edges, and sends what it held then", func() {
			handset := newHandset() // New York
			setClock("2027-06-15 20:55")
			before := t.send(acct, map[string]any{"to": handset, "body": "before nine"})
			Expect(before).To(HaveKeyWithValue("status", "queued"))
			t.awaitStatus(before["id"].(string), "delivered")

			setClock("2027-06-15 21:05")
			late := t.send(acct, map[string]any{"to": handset, "body": "after nine"})
			Expect(late).To(BeHeldUntil("2027-06-16T12:00:00Z"))

			setClock("2027-06-16 07:55")
			early := t.send(acct, map[string]any{"to": handset, "body": "before eight"})
			Expect(early).To(BeHeldUntil("2027-06-16T12:00:00Z"))
			dropped := t.send(acct, map[string]any{"to": handset, "body": "never"})
			Expect(dropped).To(BeHeldUntil("2027-06-16T12:00:00Z"))

			Consistently(t.messageStatus(late["id"].(string)), time.Second).Should(Equal("scheduled"))
			Expect(t.get("/messages/" + early["id"].(string)).JSON()).To(BeHeldUntil("2027-06-16T12:00:00Z"))
			Expect(bodiesTo(handset)).To(Equal([]string{"before nine"}), "the held messages have not reached the carrier")

			By("canceling a held message as any scheduled one")
			r := t.post("/messages/"+dropped["id"].(string)+"/cancel", nil)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(HaveKeyWithValue("status", "canceled"))

			By("sending the held messages once the clock passes 08:00")
			opened := setClock("2027-06-16 08:05")
			after := t.send(acct, map[string]any{"to": handset, "body": "after eight"})
			Expect(after).To(HaveKeyWithValue("status", "queued"))
			for _, m := range []map[string]any{late, early, after} {
				got := t.awaitStatus(m["id"].(string), "delivered")
				sent, err := time.Parse(time.RFC3339Nano, got["sent_at"].(string))
				Expect(err).NotTo(HaveOccurred())
				Expect(sent).To(BeTemporally(">=", opened.Add(-5*time.Minute)), "sent at 08:00 or later")
			}
			bodies := bodiesTo(handset)
			Expect(bodies).To(HaveLen(4))
			Expect(bodies[0]).To(Equal("before nine"))
			Expect(bodies[1:]).To(ConsistOf("after nine", "before eight", "after eight"))
			Expect(t.messageStatus(dropped["id"].(string))()).To(Equal("canceled"))
		})

		It("goes by the recipient's local time: Los Angeles at 20:30 goes, New York at 23:30 waits", func() {
			setClock("2027-06-15 23:30")
			la := t.send(acct, map[string]any{"to": newLAHandset(), "body": "hi"})
			ny := t.send(acct, map[string]any{"to": newHandset(), "body": "hi"})
			Expect(la).To(HaveKeyWithValue("status", "queued"))
			Expect(ny).To(BeHeldUntil("2027-06-16T12:00:00Z"))
		})

		It("holds across a DST change until 08:00 local time (12:00 UTC after the clocks go forward, 13:00 after they go back)", func() {
			setClock("2027-03-13 21:30")
			spring := t.send(acct, map[string]any{"to": newHandset(), "body": "spring"})
			Expect(spring).To(BeHeldUntil("2027-03-14T12:00:00Z"))
			setClock("2027-11-06 21:30")
			fall := t.send(acct, map[string]any{"to": newHandset(), "body": "fall"})
			Expect(fall).To(BeHeldUntil("2027-11-07T13:00:00Z"))
		})

		It("holds a message whose own send_at is outside the window, and keeps one inside it", func() {
			setClock("2027-06-15 12:00")
			night := t.send(acct, map[string]any{"to": newHandset(), "body": "x", "send_at": "2027-06-16T03:00:00Z"}) // 23:00 in New York
			Expect(night).To(BeHeldUntil("2027-06-16T12:00:00Z"))
			morning := t.send(acct, map[string]any{"to": newHandset(), "body": "x", "send_at": "2027-06-16T14:00:00Z"}) // 10:00
			Expect(morning).To(BeHeldUntil("2027-06-16T14:00:00Z"))
		})

		It("holds nothing when quiet hours are off", func() {
			Expect(t.patch("/accounts/"+acct, map[string]any{"quiet_hours": map[string]any{"enabled": false}})).To(HaveStatus(http.StatusOK))
			setClock("2027-06-15 23:30")
			m := t.send(acct, map[string]any{"to": newHandset(), "body": "late"})
			Expect(m).To(HaveKeyWithValue("status", "queued"))
			t.awaitStatus(m["id"].(string), "delivered")
		})
	})

	Describe("exemptions", func() {
		It("sends a reply at any hour to a contact who wrote within 24 hours, and holds one after", func() {
			handset := newHandset()
			setClock("2027-06-15 22:00")
			handsetSends(handset, number, "Are you open tomorrow?")
			reply := t.send(acct, map[string]any{"to": handset, "body": "Yes, from 9"})
			Expect(reply).To(HaveKeyWithValue("status", "queued"))
			t.awaitStatus(reply["id"].(string), "delivered")

			setClock("2027-06-16 22:01")
			later := t.send(acct, map[string]any{"to": handset, "body": "Still there?"})
			Expect(later).To(BeHeldUntil("2027-06-17T12:00:00Z"))
		})

		It("sends a verification code at any hour", func() {
			setClock("2027-06-15 23:30")
			v, _, code := t.startVerification(acct)
			Expect(code).To(HaveLen(6))
			Expect(t.check(v["id"].(string), code).JSON()).To(HaveKeyWithValue("result", "ok"))
		})
	})

	It("sends held messages and blast messages when the window opens", func() {
		// Real time: a blast fans out in a job that River schedules by the database's clock, so the
		// window here opens in New York at the next whole minute (at least 20 s away, for the
		// sends) and closes 2 hours before that: Los Angeles, 3 hours behind, is inside it.
		opens := time.Now().Truncate(time.Minute).Add(time.Minute)
		if time.Until(opens) < 20*time.Second {
			opens = opens.Add(time.Minute)
		}
		local := opens.In(newYork)
		start := local.Hour()*60 + local.Minute()
		end := (start + 22*60) % (24 * 60)
		r := t.patch("/accounts/"+acct, map[string]any{"quiet_hours": map[string]any{
			"start": fmt.Sprintf("%02d:%02d", start/60, start%60), "end": fmt.Sprintf("%02d:%02d", end/60, end%60)}})
		Expect(r).To(HaveStatus(http.StatusOK), r.String())
		want := opens.UTC().Format(time.RFC3339)

		handset, la, ny := newHandset(), newLAHandset(), newHandset()
		var ids []string
		for _, body := range []string{"one", "two", "three"} {
			m := t.send(acct, map[string]any{"to": handset, "body": body})
			Expect(m).To(BeHeldUntil(want))
			ids = append(ids, m["id"].(string))
		}
		b := t.createBlast(acct, map[string]any{"body": "Sale today", "to": []string{ny, la}})
		Eventually(func() []string { return bodiesTo(la) }).WithTimeout(20*time.Second).Should(Equal([]string{"Sale today"}),
			"Los Angeles is inside the window")
		var held map[string]any
		Eventually(func() map[string]any {
			for _, m := range t.get("/accounts/" + acct + "/messages?limit=100").JSON()["data"].([]any) {
				if msg := m.(map[string]any); msg["blast_id"] == b["id"] && msg["status"] != "delivered" && msg["status"] != "sent" {
					held = msg
				}
			}
			return held
		}).WithTimeout(20 * time.Second).ShouldNot(BeNil())
		Expect(held).To(BeHeldUntil(want))
		Expect(outbox(handset)).To(BeEmpty())
		Expect(outbox(ny)).To(BeEmpty())
		Eventually(func() map[string]int { return counts(t.get("/blasts/" + b["id"].(string)).JSON()) }).WithTimeout(20*time.Second).
			Should(SatisfyAll(HaveKeyWithValue("queued", 1), HaveKeyWithValue("delivered", 1)), "a held message counts as queued")

		ids = append(ids, held["id"].(string))
		for _, id := range ids {
			m := t.awaitStatusWithin(id, "delivered", 2*time.Minute)
			sent, err := time.Parse(time.RFC3339Nano, m["sent_at"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(sent).To(BeTemporally(">=", opens))
			Expect(t.eventsFor("message.sent", id)).To(HaveLen(1))
			Expect(t.eventsFor("message.delivered", id)).To(HaveLen(1))
		}
		Expect(bodiesTo(handset)).To(ConsistOf("one", "two", "three"))
		Expect(bodiesTo(ny)).To(Equal([]string{"Sale today"}))
	})
})

// BeHeldUntil matches a message held as scheduled until sendAt (RFC 3339, UTC).
func BeHeldUntil(sendAt string) types.GomegaMatcher {
	return SatisfyAll(HaveKeyWithValue("status", "scheduled"), HaveKeyWithValue("send_at", sendAt))
}

// bodiesTo is what the simulated carrier delivered to a handset, in order.
func bodiesTo(handset string) []string {
	var out []string
	for _, e := range outbox(handset) {
		out = append(out, e.Body)
	}
	return out
}

// awaitStatusWithin is awaitStatus with a longer wait, for a message held until a window opens.
func (t *tenant) awaitStatusWithin(id, status string, d time.Duration) map[string]any {
	EventuallyWithOffset(1, t.messageStatus(id)).WithTimeout(d).WithPolling(200 * time.Millisecond).Should(Equal(status))
	return t.get("/messages/" + id).JSON()
}
