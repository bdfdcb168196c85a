package main

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The simulated carrier's receipts survive the process that owes them: the real binary (on the
// suite's database, SQLite or PostgreSQL) is killed with SIGKILL after the carrier accepted every
// message and before their receipts came due (a 5 s latency), then started again: the sweep of
// the new process reports each receipt, once.
var _ = Describe("A crash with simulated receipts owed", Ordered, func() {
	const total = 200
	var proc *serveProcess

	BeforeAll(func(ctx context.Context) {
		proc = newTestServeProcess(ctx, "the receipts crash test", "--pace-local", "0", "--sim-latency", "5s")
	})
	count := func(q string, args ...any) int64 { return proc.count(q, args...) }

	It("delivers every receipt after the restart, once", func(ctx context.Context) {
		key, acct := proc.sendableAccount(ctx, "+19995550901")
		serve := proc.start()
		Expect(sendConcurrently([]string{proc.addr}, key, acct, total, total, "receipts crash test")).To(BeZero())
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM sim_outbox`) }).WithTimeout(30 * time.Second).
			WithPolling(20 * time.Millisecond).Should(BeEquivalentTo(total))

		By("killing the server with SIGKILL before the receipts come due")
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		delivered := count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`)
		GinkgoWriter.Printf("killed with %d of %d delivered\n", delivered, total)
		Expect(delivered).To(BeNumerically("<", total), "receipts were owed at the kill")

		By("starting it again")
		proc.start()
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`) }).
			WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM events WHERE type = 'message.delivered'`)).To(BeEquivalentTo(total))
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM sim_receipts`) }).WithTimeout(10*time.Second).
			Should(BeZero(), "every receipt reported is forgotten")
	})
})
