package main

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Several instances on one database: two real `switchboard serve` processes share a PostgreSQL
// database, an unpaced sender's messages are sent through both, and their job workers dispatch
// them together (each instance's dispatches share transactions; the two instances contend for the
// same rows). Every message must be submitted once, delivered once, and announced once.
var _ = Describe("Two instances on one database", Ordered, func() {
	const total = 2000
	var a, b *serveProcess

	BeforeAll(func(ctx context.Context) {
		a = newServeProcess(ctx, "the two-instance test", "--pace-local", "0")
		b = a.sibling()
	})

	It("submit each message once and record each outcome once", func(ctx context.Context) {
		key, acct := a.sendableAccount(ctx, "+19995550901")
		a.start()
		b.start()
		Expect(sendConcurrently([]string{a.addr, b.addr}, key, acct, total, 700, "two instances")).To(BeZero())

		Eventually(func() int64 { return a.count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`) }).
			WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		Expect(a.count(`SELECT COUNT(*) FROM sim_outbox`)).To(BeEquivalentTo(total))
		Expect(a.count(`SELECT COUNT(*) FROM messages m WHERE (SELECT COUNT(*) FROM sim_outbox o WHERE o.reference = m.id) <> 1`)).
			To(BeZero(), "the carrier received every message exactly once")
		Expect(a.count(`SELECT COUNT(*) FROM conversations`)).To(BeEquivalentTo(700), "one conversation per recipient")
		for _, typ := range []string{"message.sent", "message.delivered"} {
			Expect(a.count(`SELECT COUNT(*) FROM (SELECT data::jsonb->>'id' FROM events WHERE type = ? GROUP BY 1 HAVING COUNT(*) > 1) d`, typ)).
				To(BeZero(), "no message has two %s events", typ)
		}
		Expect(a.count(`SELECT COUNT(*) FROM events WHERE type = 'message.delivered'`)).To(BeEquivalentTo(total))
		Expect(a.count(`SELECT COUNT(*) FROM events WHERE type = 'conversation.created'`)).To(BeEquivalentTo(700))
	})
})
