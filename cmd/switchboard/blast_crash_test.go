package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The blast crash test: the real binary serving on PostgreSQL is killed with SIGKILL while it fans
// out a blast of 20,000 recipients, then started again. Every recipient must get exactly one
// message, as the simulated carrier's outbox (the handsets' view) shows.
var _ = Describe("A crash during a blast's fan-out", Ordered, func() {
	const total = 20000
	var (
		proc *serveProcess
		addr string
	)

	BeforeAll(func(ctx context.Context) {
		proc = newServeProcess(ctx, "the blast crash test", "--pace-local", "100000")
		addr = proc.addr
	})
	start := func() *exec.Cmd { return proc.start() }
	count := func(q string, args ...any) int64 { return proc.count(q, args...) }

	It("neither skips nor repeats a recipient", func(ctx context.Context) {
		key, acct := proc.sendableAccount(ctx, "+19995550901")
		serve := start()
		to := make([]string, total)
		for i := range to {
			to[i] = fmt.Sprintf("+1646%07d", i)
		}
		body, err := json.Marshal(map[string]any{"body": "Blast crash test", "to": to})
		Expect(err).NotTo(HaveOccurred())
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/accounts/"+acct+"/blasts", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		began := time.Now()
		resp, err := insecureClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusCreated), string(b))
		var blast struct {
			ID string `json:"id"`
		}
		Expect(json.Unmarshal(b, &blast)).To(Succeed())
		GinkgoWriter.Printf("blast of %d accepted in %s\n", total, time.Since(began))

		By("killing the server with SIGKILL during the fan-out")
		Eventually(func() int64 { return count(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID) }).
			WithTimeout(30 * time.Second).WithPolling(5 * time.Millisecond).Should(BeNumerically(">", 0))
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		fanned := count(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID)
		atKill := count(`SELECT COUNT(*) FROM sim_outbox`)
		GinkgoWriter.Printf("killed after %s: %d of %d recipients fanned out, %d in the outbox\n", time.Since(began), fanned, total, atKill)
		Expect(fanned).To(BeNumerically("<", total), "the kill came mid-fan-out")

		By("starting it again")
		start()
		Eventually(func() int64 {
			return count(`SELECT COUNT(*) FROM messages WHERE blast_id = ? AND status = 'delivered'`, blast.ID)
		}).WithTimeout(120 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		GinkgoWriter.Printf("all delivered %s after the blast was accepted\n", time.Since(began))

		Expect(count(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM blast_recipients WHERE blast_id = ?`, blast.ID)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM messages WHERE blast_id = ?`, blast.ID)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM sim_outbox`)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(DISTINCT to_number) FROM sim_outbox`)).To(BeEquivalentTo(total), "each recipient got exactly one message")
		Expect(count(`SELECT COUNT(*) FROM messages m WHERE blast_id = ? AND (SELECT COUNT(*) FROM sim_outbox o WHERE o.reference = m.id) <> 1`, blast.ID)).
			To(BeZero(), "the carrier received every message exactly once")
	})
})
