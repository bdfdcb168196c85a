package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The crash test: the real binary serving on PostgreSQL is killed with SIGKILL while it dispatches
// 2,000 accepted messages, then started again. Every message must end delivered, and the
// simulated carrier must have received each exactly once.
var _ = Describe("A crash while dispatching", Ordered, func() {
	const total = 2000
	var (
		proc *serveProcess
		addr string
	)

	BeforeAll(func(ctx context.Context) {
		proc = newServeProcess(ctx, "the crash test", "--pace-local", "250")
		addr = proc.addr
	})
	start := func() *exec.Cmd { return proc.start() }
	count := func(q string, args ...any) int64 { return proc.count(q, args...) }

	It("loses no message and sends none twice", func(ctx context.Context) {
		key, acct := proc.sendableAccount(ctx, "+19995550900")
		serve := start()
		began := time.Now()
		By("sending 2,000 messages")
		Expect(sendConcurrently([]string{addr}, key, acct, total, 500, "crash test")).To(BeZero())
		Expect(count(`SELECT COUNT(*) FROM messages`)).To(BeEquivalentTo(total))

		By("killing the server with SIGKILL while it dispatches")
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM sim_outbox`) }).WithTimeout(20 * time.Second).
			WithPolling(20 * time.Millisecond).Should(BeNumerically(">=", 300))
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		atKill := count(`SELECT COUNT(*) FROM sim_outbox`)
		delivered := count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`)
		GinkgoWriter.Printf("killed after %s: %d in the outbox, %d delivered\n", time.Since(began), atKill, delivered)
		Expect(atKill).To(BeNumerically("<", total), "the kill came mid-dispatch")

		By("starting it again")
		start()
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`) }).
			WithTimeout(50 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		GinkgoWriter.Printf("all delivered %s after the first send\n", time.Since(began))

		Expect(count(`SELECT COUNT(*) FROM sim_outbox`)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM messages m WHERE (SELECT COUNT(*) FROM sim_outbox o WHERE o.reference = m.id) <> 1`)).
			To(BeZero(), "the carrier received every message exactly once")
		Expect(count(`SELECT COUNT(*) FROM events WHERE type = 'message.delivered'`)).To(BeEquivalentTo(total))
	})
})

// insecureClient talks to the child's self-signed TLS listener.
var insecureClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 32}, //nolint:gosec // a test's own server
}
