package carriertest

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
)

// Messaging names the numbers the Messenger specs send between.
type Messaging struct {
	// From is a number of the adapter's that may send. Defaults to +18335550100.
	From string
	// To is a handset the adapter delivers to. Defaults to +14155550123.
	To string
}

// messengerSpecs: what the core relies on when it submits messages. A submission is idempotent
// by its reference (the core's message id), its fate arrives as one receipt through the Reporter
// naming that reference, and a receipt the reporter refused is reported again.
func messengerSpecs(h *Harness) {
	Describe("Messenger", func() {
		var m carriers.Messenger
		BeforeEach(func() {
			var ok bool
			if m, ok = h.Carrier.(carriers.Messenger); !ok {
				Skip(h.Carrier.Name() + " cannot send messages")
			}
			if h.Messaging.From == "" {
				h.Messaging.From = "+18335550100"
			}
			if h.Messaging.To == "" {
				h.Messaging.To = "+14155550123"
			}
		})

		outbound := func() carriers.Outbound {
			return carriers.Outbound{Reference: newReference("msg"), From: h.Messaging.From, To: h.Messaging.To,
				Body: "Your car is ready for pickup.", Encoding: "gsm7", Segments: 1}
		}
		// receipts waits for the receipts accepted about reference to number n and returns them.
		receipts := func(reference string, n int) []carriers.Receipt {
			var got []carriers.Receipt
			EventuallyWithOffset(1, func() []carriers.Receipt {
				got = got[:0]
				for _, r := range h.Reports.Reports() {
					if r.Receipt != nil && r.Receipt.Reference == reference {
						ExpectWithOffset(2, r.Carrier).To(Equal(h.Carrier.Name()))
						got = append(got, *r.Receipt)
					}
				}
				return got
			}).WithTimeout(h.Timeout).Should(HaveLen(n))
			return got
		}

		It("accepts a message and reports its delivery by one receipt that names the reference", func(ctx SpecContext) {
			o := outbound()
			sub, err := m.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
			Expect(sub.Duplicate).To(BeFalse())
			rc := receipts(o.Reference, 1)[0]
			Expect(rc).To(SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("At", Not(BeZero()))))
			if sub.CarrierID != "" {
				Expect(rc.CarrierID).To(Equal(sub.CarrierID))
			}
		})

		It("answers a repeated reference as a duplicate of the first submission and sends nothing again", func(ctx SpecContext) {
			o := outbound()
			first, err := m.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
			again, err := m.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
			Expect(again).To(SatisfyAll(HaveField("Duplicate", true), HaveField("CarrierID", first.CarrierID)))
			receipts(o.Reference, 1)
			Consistently(func() int { return len(receipts(o.Reference, 1)) }, "1s").Should(Equal(1), "one message, one receipt")
		})

		It("reports a receipt again until the reporter accepts it", func(ctx SpecContext) {
			o := outbound()
			h.Reports.Refuse(o.Reference, 1)
			_, err := m.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
			receipts(o.Reference, 1)
			refused := 0
			for _, r := range h.Reports.Refused() {
				if r.Receipt != nil && r.Receipt.Reference == o.Reference {
					refused++
				}
			}
			Expect(refused).To(Equal(1))
		})
	})
}
