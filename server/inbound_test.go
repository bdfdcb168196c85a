package server_test

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
)

// handsetSends makes a handset send a message to one of our numbers through the simulated carrier.
func handsetSends(from, to, body string) string {
	c, err := core.Carriers.Get(sim.Name)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	id, err := c.(*sim.Carrier).Inbound(context.Background(), from, to, body, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return id
}

// handsetCalls makes a handset call one of the installation's numbers through the simulated
// carrier, which reports the call (and its voicemail) as a real carrier does.
func handsetCalls(call sim.Call) {
	c, err := core.Carriers.Get(sim.Name)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	_, err = c.(*sim.Carrier).PlaceCall(context.Background(), call)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

var _ = Describe("Inbound messages", func() {
	var (
		t      *tenant
		acct   string
		number string
	)
	BeforeEach(func() {
		t, acct, _, number = newSendingAccount()
	})

	// inbox lists the account's inbound messages, newest first.
	inbox := func() []any {
		var out []any
		for _, m := range t.get("/accounts/" + acct + "/messages?limit=100").JSON()["data"].([]any) {
			if m.(map[string]any)["direction"] == "inbound" {
				out = append(out, m)
			}
		}
		return out
	}

	It("stores a handset's message as received in a new conversation with a new contact, once per carrier id", func() {
		handset := newHandset()
		id := handsetSends(handset[:2]+" ("+handset[2:5]+") "+handset[5:8]+"-"+handset[8:], number, "Is my car ready?")
		msgs := inbox()
		Expect(msgs).To(HaveLen(1))
		m := msgs[0].(map[string]any)
		Expect(m).To(SatisfyAll(
			HaveKeyWithValue("status", "received"), HaveKeyWithValue("body", "Is my car ready?"),
			HaveKey("received_at"), HaveKeyWithValue("encoding", "gsm7"), HaveKeyWithValue("segments", BeNumerically("==", 1)),
		))
		conv := m["conversation"].(map[string]any)
		Expect(conv["contact"]).To(HaveKeyWithValue("phone_number", handset))
		Expect(conv["phone_number"]).To(HaveKeyWithValue("number", number))
		Expect(t.eventsFor("message.received", m["id"].(string))).To(ConsistOf(HaveKeyWithValue("status", "received")))
		Expect(t.eventsFor("conversation.created", conv["id"].(string))).To(HaveLen(1))

		By("ignoring the carrier's repeat of the same message")
		Expect(core.Reports.Report(context.Background(), carriers.Report{Carrier: sim.Name, Inbound: &carriers.InboundMessage{
			CarrierID: id, From: handset, To: number, Body: "Is my car ready?", At: time.Now()}})).To(Succeed())
		Expect(inbox()).To(HaveLen(1))

		By("threading a reply and the next message into the same conversation")
		reply := t.send(acct, map[string]any{"to": handset, "body": "Yes!"})
		Expect(reply["conversation"].(map[string]any)["id"]).To(Equal(conv["id"]))
		handsetSends(handset, number, "Thanks")
		Expect(inbox()).To(HaveLen(2))
		Expect(t.eventsFor("conversation.created", conv["id"].(string))).To(HaveLen(1))
		list := t.get("/accounts/" + acct + "/messages?conversation_id=" + conv["id"].(string)).JSON()["data"]
		Expect(list).To(HaveLen(3))
	})

	It("stores a carrier's text that PostgreSQL cannot hold (NUL, invalid UTF-8) with replacement characters", func() {
		handset := newHandset()
		Expect(core.Reports.Report(context.Background(), carriers.Report{Carrier: sim.Name, Inbound: &carriers.InboundMessage{
			CarrierID: "bad-bytes-" + handset, From: handset, To: number, Body: "ok\x00then \xff\xfe end", At: time.Now()}})).To(Succeed())
		msgs := inbox()
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0]).To(HaveKeyWithValue("body", "ok\uFFFDthen \uFFFD end"))
	})

	It("drops a message to a number nobody holds without an error", func() {
		Expect(core.Reports.Report(context.Background(), carriers.Report{Carrier: sim.Name, Inbound: &carriers.InboundMessage{
			CarrierID: "x1", From: "+14155550301", To: newNumber(), Body: "hello?"}})).To(Succeed())
	})

	DescribeTable("opts the contact out on an opt-out keyword, confirms with a real message, and refuses later sends",
		func(keyword string) {
			handset := newHandset()
			handsetSends(handset, number, keyword)
			contacts := t.get("/accounts/" + acct + "/contacts").JSON()["data"].([]any)
			Expect(contacts).To(ConsistOf(SatisfyAll(HaveKeyWithValue("phone_number", handset), HaveKeyWithValue("opted_out", true))))
			cid := contacts[0].(map[string]any)["id"].(string)
			Expect(t.eventsFor("contact.opted_out", cid)).To(ConsistOf(HaveKeyWithValue("phone_number", handset)))
			Eventually(func() []sim.OutboxEntry { return outbox(handset) }).WithTimeout(10 * time.Second).
				Should(ConsistOf(SatisfyAll(HaveField("From", number), HaveField("Body", ContainSubstring("unsubscribed")))))
			Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": handset, "body": "Sale!"})).
				To(HaveError(http.StatusUnprocessableEntity, "opted_out"))
		},
		Entry("STOP", "STOP"),
		Entry("stop in lower case", "stop"),
		Entry("STOPALL", "STOPALL"),
		Entry("UNSUBSCRIBE", "Unsubscribe"),
		Entry("CANCEL", "CANCEL"),
		Entry("END", "end"),
		Entry("QUIT with blanks", "  QUIT "),
	)

	It("opts back in on START (contact.opted_in), confirms, and sends again", func() {
		handset := newHandset()
		handsetSends(handset, number, "STOP")
		handsetSends(handset, number, "START")
		contacts := t.get("/accounts/" + acct + "/contacts").JSON()["data"].([]any)
		Expect(contacts).To(ConsistOf(HaveKeyWithValue("opted_out", false)))
		Expect(t.eventsFor("contact.opted_in", contacts[0].(map[string]any)["id"].(string))).To(HaveLen(1))
		Eventually(func() []sim.OutboxEntry { return outbox(handset) }).WithTimeout(10 * time.Second).Should(HaveLen(2))
		m := t.send(acct, map[string]any{"to": handset, "body": "Welcome back"})
		t.awaitStatus(m["id"].(string), "delivered")
	})

	DescribeTable("opts in on UNSTOP and on YES after an opt-out",
		func(keyword string) {
			handset := newHandset()
			handsetSends(handset, number, "STOP")
			handsetSends(handset, number, keyword)
			Expect(t.get("/accounts/" + acct + "/contacts").JSON()["data"]).To(ConsistOf(HaveKeyWithValue("opted_out", false)))
		},
		Entry("UNSTOP", "UNSTOP"),
		Entry("yes", "yes"),
	)

	It("answers HELP and INFO with the account's help reply and changes nothing", func() {
		handset := newHandset()
		handsetSends(handset, number, "HELP")
		handsetSends(handset, number, "info")
		Eventually(func() []sim.OutboxEntry { return outbox(handset) }).WithTimeout(10 * time.Second).Should(HaveLen(2))
		Expect(outbox(handset)).To(HaveEach(HaveField("Body", SatisfyAll(HavePrefix("Acme Dental:"), ContainSubstring("STOP")))))
		Expect(t.events("contact.opted_out")).To(BeEmpty())
		Expect(t.events("contact.opted_in")).To(BeEmpty())
	})

	It("treats YES without an opt-out, and a keyword inside a sentence, as ordinary messages", func() {
		handset := newHandset()
		handsetSends(handset, number, "Yes")
		handsetSends(handset, number, "please stop calling me at work")
		Consistently(func() []sim.OutboxEntry { return outbox(handset) }, time.Second).Should(BeEmpty())
		Expect(t.get("/accounts/" + acct + "/contacts").JSON()["data"]).To(ConsistOf(HaveKeyWithValue("opted_out", false)))
	})

	It("routes a reply to the shared demo number to the account that last wrote from it", func() {
		_, secret, err := st.CreateAPIKey(context.Background(), t.ProjectID, true)
		Expect(err).NotTo(HaveOccurred())
		handset := newHandset()
		t.withKey(secret).send(acct, map[string]any{"to": handset, "body": "Try the demo"})
		handsetSends(handset, "+18335550000", "Nice demo")
		Expect(inbox()).To(ConsistOf(SatisfyAll(HaveKeyWithValue("body", "Nice demo"),
			HaveKeyWithValue("conversation", HaveKeyWithValue("phone_number", HaveKeyWithValue("type", "demo"))))))
	})

	It("keeps the inbound text's encoding and segments", func() {
		handsetSends("+14155550360", number, strings.Repeat("😀", 36))
		Expect(inbox()).To(ConsistOf(SatisfyAll(HaveKeyWithValue("encoding", "ucs2"), HaveKeyWithValue("segments", BeNumerically("==", 2)))))
	})
})
