package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// The webhook crash test: the real binary serving on PostgreSQL is killed with SIGKILL while it
// delivers the webhooks of 3,000 events to a slow receiver, then started again. Every event must
// reach the receiver and every delivery end succeeded; only a webhook whose success was not yet
// recorded at the kill may arrive twice (the same webhook-id, which receivers deduplicate on).
var _ = Describe("A crash while delivering webhooks", Ordered, func() {
	const (
		total = 3000
		// inFlight is the most attempts an instance sends to one endpoint at once. A repeat is an
		// answered attempt whose success was not recorded before the kill: the deliverer records
		// successes with its next claim, within webhookGather (15 ms) of the first waiting. This
		// receiver answers at most inFlight requests per 300 ms hold, so at most one such burst
		// waits for its record at any time (the request in flight at the kill is not counted:
		// the receiver counts an arrival only when it answers).
		inFlight = webhooks.DefaultEndpointConcurrency
	)
	var proc *serveProcess

	BeforeAll(func(ctx context.Context) {
		proc = newServeProcess(ctx, "the webhook crash test", "--webhook-allow-private=true")
	})

	It("loses no webhook", func(ctx context.Context) {
		var mu sync.Mutex
		arrived := map[string]int{}
		var requests atomic.Int64
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			requests.Add(1)
			// Hold every request, so that hundreds are in flight whenever the process dies.
			select {
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
			mu.Lock()
			arrived[r.Header.Get("webhook-id")]++
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		DeferCleanup(rcv.Close)
		got := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(arrived)
		}

		prj, err := proc.st.CreateProject(ctx, "webhook crash")
		Expect(err).NotTo(HaveOccurred())
		wh, err := webhooks.New(webhooks.Config{Store: proc.st, AllowPrivate: true})
		Expect(err).NotTo(HaveOccurred())
		_, err = wh.SetEndpoint(ctx, prj.ID, rcv.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		By("recording 3,000 events")
		account := store.NewID(store.PrefixAccount)
		evs := make([]store.Event, total)
		for i := range evs {
			evs[i], err = store.NewEvent(prj.ID, account, webhooks.EventContactOptedIn, map[string]string{"id": store.NewID(store.PrefixContact)})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(proc.st.Tx(ctx, func(tx *store.Store) error { return webhooks.Publish(ctx, tx, evs...) })).To(Succeed())
		Expect(proc.count(`SELECT COUNT(*) FROM webhook_deliveries WHERE project_id = ?`, prj.ID)).To(BeEquivalentTo(total))

		began := time.Now()
		serve := proc.start()
		By("killing the server with SIGKILL while it delivers")
		Eventually(got).WithTimeout(30 * time.Second).WithPolling(10 * time.Millisecond).Should(BeNumerically(">=", 600))
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		atKill, requestsAtKill := got(), requests.Load()
		GinkgoWriter.Printf("killed after %s: %d events arrived, %d requests made\n", time.Since(began), atKill, requestsAtKill)
		Expect(atKill).To(BeNumerically("<", total), "the kill came mid-delivery")
		Expect(requestsAtKill).To(BeNumerically(">", atKill), "requests were in flight at the kill")

		By("starting it again")
		proc.start()
		Eventually(func() int64 {
			return proc.count(`SELECT COUNT(*) FROM webhook_deliveries WHERE project_id = ? AND status = ?`, prj.ID, store.DeliverySucceeded)
		}).WithTimeout(120 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		GinkgoWriter.Printf("every delivery succeeded %s after the first start\n", time.Since(began))

		mu.Lock()
		defer mu.Unlock()
		twice := 0
		for _, e := range evs {
			Expect(arrived).To(HaveKey(e.ID), "every event reached the receiver")
			twice += arrived[e.ID] - 1
		}
		Expect(arrived).To(HaveLen(total))
		GinkgoWriter.Printf("%d events arrived twice\n", twice)
		Expect(twice).To(BeNumerically("<=", inFlight), "only successes still waiting for their record at the kill are repeated")
	})
})
