package sim_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/kit"
)

// gone is the Reporter of a process that ends before it reports anything: every report fails.
type gone struct{}

func (gone) Report(context.Context, carriers.Report) error { return errors.New("the process ended") }

var _ = Describe("The simulated carrier's receipts", func() {
	// receiptsOf returns the receipts the suite's recorder accepted about reference.
	receiptsOf := func(reference string) []carriers.Receipt {
		var out []carriers.Receipt
		for _, r := range reports.Reports() {
			if r.Receipt != nil && r.Receipt.Reference == reference {
				out = append(out, *r.Receipt)
			}
		}
		return out
	}
	// outbound is a message to a handset, under a fresh reference.
	outbound := func(to string) carriers.Outbound {
		return carriers.Outbound{Reference: kit.NewID("msg"), From: "+18335550100", To: to, Body: "Your table is ready.", Encoding: "gsm7", Segments: 1}
	}
	// accepter is another instance's carrier whose process ends before it reports its receipts.
	accepter := func(latency time.Duration) *sim.Carrier {
		c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: gone{}, Latency: latency, ReceiptGrace: receiptGrace, Logger: quiet})
		Expect(err).NotTo(HaveOccurred())
		return c
	}

	It("arrives after the configured latency, once, with the fate of the destination number", func(ctx SpecContext) {
		c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: reports, Latency: 700 * time.Millisecond, ReceiptGrace: receiptGrace, Logger: quiet})
		Expect(err).NotTo(HaveOccurred())
		delivered, failed, silent := outbound("+14155550123"), outbound("+15005550002"), outbound(sim.SilentNumber)
		submitted := time.Now()
		for _, o := range []carriers.Outbound{delivered, failed, silent} {
			_, err := c.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(func() []carriers.Receipt { return receiptsOf(delivered.Reference) }).Should(ConsistOf(
			SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("At", BeTemporally(">=", submitted.Add(700*time.Millisecond))))))
		Eventually(func() []carriers.Receipt { return receiptsOf(failed.Reference) }).Should(ConsistOf(
			SatisfyAll(HaveField("Status", carriers.ReceiptFailed), HaveField("FailureReason", carriers.FailureUnreachableCarrier),
				HaveField("At", BeTemporally(">=", submitted.Add(700*time.Millisecond))))))
		Consistently(func() int {
			return len(receiptsOf(delivered.Reference)) + len(receiptsOf(failed.Reference)) + len(receiptsOf(silent.Reference))
		}).WithTimeout(receiptGrace+2*time.Second).WithPolling(100*time.Millisecond).Should(Equal(2), "the sweep reports none of them again, and the silent number gets none")
	})

	It("owed by a process that ended before it reported them, arrive through the sweep of another instance", func(ctx SpecContext) {
		dead := accepter(-1)
		delivered, failed, silent := outbound("+14155550124"), outbound("+15005550004"), outbound(sim.SilentNumber)
		submitted := time.Now()
		for _, o := range []carriers.Outbound{delivered, failed, silent} {
			_, err := dead.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(func() []carriers.Receipt { return receiptsOf(delivered.Reference) }).Should(ConsistOf(
			SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("At", BeTemporally(">=", submitted.Add(receiptGrace))))))
		Eventually(func() []carriers.Receipt { return receiptsOf(failed.Reference) }).Should(ConsistOf(
			SatisfyAll(HaveField("Status", carriers.ReceiptFailed), HaveField("FailureReason", carriers.FailureCarrierFiltered))))
		Consistently(func() []carriers.Receipt { return receiptsOf(silent.Reference) }, "1s").Should(BeEmpty())
	})

	It("owed by a process that ended arrive once, whichever of several instances sweeps them", func(ctx SpecContext) {
		for range 2 {
			other, err := sim.New(sim.Config{Store: st.Sim(), Reporter: reports, ReceiptGrace: receiptGrace, Logger: quiet})
			Expect(err).NotTo(HaveOccurred())
			other.Start()
			DeferCleanup(other.Close)
		}
		dead := accepter(-1)
		refs := make([]string, 60)
		done := make(chan error, len(refs))
		for i := range refs {
			o := outbound(fmt.Sprintf("+1415555%04d", 2000+i))
			refs[i] = o.Reference
			go func() { _, err := dead.Submit(ctx, o); done <- err }()
		}
		for range refs {
			Expect(<-done).To(Succeed())
		}
		count := func() (total int) {
			for _, ref := range refs {
				k := len(receiptsOf(ref))
				Expect(k).To(BeNumerically("<=", 1), "reference %s reported twice", ref)
				total += k
			}
			return total
		}
		Eventually(count).Should(Equal(len(refs)))
		Consistently(count, "2s").Should(Equal(len(refs)))
	})

	It("that the reporter refused are reported again by the sweep", func(ctx SpecContext) {
		o := outbound("+14155550125")
		reports.Refuse(o.Reference, 1)
		_, err := carrier.Submit(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []carriers.Receipt { return receiptsOf(o.Reference) }).Should(HaveLen(1))
	})
})

var _ = Describe("The simulated carrier's outbox", func() {
	It("keeps one entry of a reference submitted several times at once, and one receipt", func(ctx SpecContext) {
		o := carriers.Outbound{Reference: kit.NewID("msg"), From: "+18335550100", To: "+14155550126", Body: "Twice?", Encoding: "gsm7", Segments: 1}
		subs := make(chan carriers.Submission, 6)
		for range cap(subs) {
			go func() {
				defer GinkgoRecover()
				sub, err := carrier.Submit(ctx, o)
				Expect(err).NotTo(HaveOccurred())
				subs <- sub
			}()
		}
		var first []carriers.Submission
		ids := map[string]bool{}
		for range cap(subs) {
			sub := <-subs
			ids[sub.CarrierID] = true
			if !sub.Duplicate {
				first = append(first, sub)
			}
		}
		Expect(first).To(HaveLen(1), "one submission is the first, the others its duplicates")
		Expect(ids).To(HaveLen(1), "every answer names the first one's carrier id")
		entries, err := sim.Outbox(ctx, st.Sim(), o.To)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(ConsistOf(HaveField("Reference", o.Reference)))
		Eventually(func() int {
			k := 0
			for _, r := range reports.Reports() {
				if r.Receipt != nil && r.Receipt.Reference == o.Reference {
					k++
				}
			}
			return k
		}).Should(Equal(1))
	})
})
