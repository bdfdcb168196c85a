package sim_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/carriertest"
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

// countingStore counts the transactions that put submissions into the outbox.
type countingStore struct {
	sim.Store
	adds atomic.Int32
}

func (c *countingStore) AddToOutbox(ctx context.Context, es []*sim.OutboxEntry, then func(map[string]string) ([]sim.OwedReceipt, time.Time)) (int64, error) {
	c.adds.Add(1)
	return c.Store.AddToOutbox(ctx, es, then)
}

var _ = Describe("The simulated carrier's batch of submissions", func() {
	It("stores the messages it takes in one transaction, each answered as Submit would be, with their receipts", func(ctx SpecContext) {
		counted := &countingStore{Store: st.Sim()}
		c, err := sim.New(sim.Config{Store: counted, Reporter: reports, Latency: -1, ReceiptGrace: receiptGrace, Logger: quiet})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		msg := func(to string) carriers.Outbound {
			return carriers.Outbound{Reference: kit.NewID("msg"), From: "+18335550100", To: to, Body: "Batched.", Encoding: "gsm7", Segments: 1}
		}
		earlier := msg("+14155550130")
		first, err := c.Submit(ctx, earlier)
		Expect(err).NotTo(HaveOccurred())
		twice := msg("+14155550131")
		ms := []carriers.Outbound{msg("+14155550132"), twice, msg(sim.RefuseNumber), msg("+15005550003"), msg(sim.SilentNumber), earlier, twice}
		counted.adds.Store(0)
		subs, errs := c.SubmitBatch(ctx, ms)
		Expect(counted.adds.Load()).To(Equal(int32(1)), "one transaction for the batch")
		Expect(subs).To(HaveLen(len(ms)))
		Expect(errs).To(HaveLen(len(ms)))
		var refused *carriers.SubmitError
		Expect(errors.As(errs[2], &refused)).To(BeTrue())
		Expect(refused.Permanent).To(BeTrue())
		for i := range ms {
			if i != 2 {
				Expect(errs[i]).NotTo(HaveOccurred())
				Expect(subs[i].CarrierID).NotTo(BeEmpty())
			}
		}
		Expect(subs[0].Duplicate || subs[1].Duplicate || subs[3].Duplicate || subs[4].Duplicate).To(BeFalse())
		Expect(subs[5]).To(Equal(carriers.Submission{CarrierID: first.CarrierID, Duplicate: true}), "a reference stored before answers with its first carrier id")
		Expect(subs[6]).To(Equal(carriers.Submission{CarrierID: subs[1].CarrierID, Duplicate: true}), "a reference twice in the batch is stored once")
		for _, i := range []int{0, 1, 3, 4} {
			entries, err := sim.Outbox(ctx, st.Sim(), ms[i].To)
			Expect(err).NotTo(HaveOccurred())
			Expect(entries).To(ContainElement(SatisfyAll(HaveField("Reference", ms[i].Reference), HaveField("CarrierID", subs[i].CarrierID))))
		}
		receipts := func(ref string) (out []carriers.Receipt) {
			for _, r := range reports.Reports() {
				if r.Receipt != nil && r.Receipt.Reference == ref {
					out = append(out, *r.Receipt)
				}
			}
			return out
		}
		Eventually(func() []carriers.Receipt { return receipts(ms[0].Reference) }).Should(ConsistOf(HaveField("Status", carriers.ReceiptDelivered)))
		Eventually(func() []carriers.Receipt { return receipts(twice.Reference) }).Should(HaveLen(1))
		Eventually(func() []carriers.Receipt { return receipts(ms[3].Reference) }).Should(ConsistOf(
			SatisfyAll(HaveField("Status", carriers.ReceiptFailed), HaveField("FailureReason", carriers.FailureLandline))))
		Consistently(func() int { return len(receipts(ms[4].Reference)) + len(receipts(twice.Reference)) }, "1s").Should(Equal(1),
			"the silent number gets none, a reference twice in the batch one")
	})
})

// batchRecorder is a Reporter that also takes many receipts in one call, as the core does.
type batchRecorder struct {
	*carriertest.Recorder
	calls atomic.Int32
}

func (b *batchRecorder) ReportReceipts(ctx context.Context, carrier string, rcs []*carriers.Receipt) error {
	b.calls.Add(1)
	for _, rc := range rcs {
		if err := b.Report(ctx, carriers.Report{Carrier: carrier, Receipt: rc}); err != nil {
			return err
		}
	}
	return nil
}

var _ = Describe("The simulated carrier's receipts to a reporter that takes batches", func() {
	It("come in one call for a batch of submissions, each with its message's fate", func(ctx SpecContext) {
		rec := &batchRecorder{Recorder: carriertest.NewRecorder()}
		c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: rec, Latency: -1, ReceiptGrace: receiptGrace, Logger: quiet})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		msg := func(to string) carriers.Outbound {
			return carriers.Outbound{Reference: kit.NewID("msg"), From: "+18335550100", To: to, Body: "Batched.", Encoding: "gsm7", Segments: 1}
		}
		ms := []carriers.Outbound{msg("+14155550140"), msg("+14155550141"), msg("+15005550005"), msg(sim.SilentNumber)}
		_, errs := c.SubmitBatch(ctx, ms)
		for _, err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		fates := func() map[string]string {
			out := map[string]string{}
			for _, r := range rec.Reports() {
				if r.Receipt != nil {
					out[r.Receipt.Reference] = string(r.Receipt.Status) + " " + r.Receipt.FailureReason
				}
			}
			return out
		}
		Eventually(fates).Should(Equal(map[string]string{
			ms[0].Reference: string(carriers.ReceiptDelivered) + " ", ms[1].Reference: string(carriers.ReceiptDelivered) + " ",
			ms[2].Reference: string(carriers.ReceiptFailed) + " " + carriers.FailureOptedOutAtCarrier,
		}))
		Expect(rec.calls.Load()).To(Equal(int32(1)), "one call for the batch's three receipts")
	})
})
