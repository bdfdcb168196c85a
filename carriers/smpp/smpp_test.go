package smpp_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linxGnu/gosmpp/data"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.jetify.com/typeid"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/carriertest"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/carriers/smpp/smsctest"
)

var handsetSeq atomic.Int64

// newHandset returns a destination no other spec sends to.
func newHandset() string { return fmt.Sprintf("+1646%07d", handsetSeq.Add(1)) }

const sender = "+18335550100"

// message returns an outbound message to a fresh handset.
func message(body, encoding string, segments int) carriers.Outbound {
	return carriers.Outbound{Reference: typeid.Must(typeid.WithPrefix("msg")).String(), From: sender, To: newHandset(),
		Body: body, Encoding: encoding, Segments: segments}
}

// receiptsOf returns the receipts rep accepted about a reference.
func receiptsOf(rep *carriertest.Recorder, reference string) []carriers.Receipt {
	var out []carriers.Receipt
	for _, r := range rep.Reports() {
		if r.Receipt != nil && r.Receipt.Reference == reference {
			out = append(out, *r.Receipt)
		}
	}
	return out
}

// inboundOf returns the inbound messages rep accepted from a handset.
func inboundOf(rep *carriertest.Recorder, from string) []carriers.InboundMessage {
	var out []carriers.InboundMessage
	for _, r := range rep.Reports() {
		if r.Inbound != nil && r.Inbound.From == from {
			out = append(out, *r.Inbound)
		}
	}
	return out
}

// partsTo returns what an SMSC accepted for a destination, by part number (the parts of a
// message are sent together, so they arrive in any order).
func partsTo(s *smsctest.SMSC, to string) []smsctest.Part {
	var out []smsctest.Part
	for _, p := range s.Parts() {
		if p.To == to {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b smsctest.Part) int { return a.Seq - b.Seq })
	return out
}

var _ = Describe("Submitting over SMPP", func() {
	It("sends a short GSM-7 message as one submit_sm with data_coding 0x00 that asks for a receipt", func(ctx SpecContext) {
		m := message("Your car is ready for pickup. Cost: 12€ [paid]", "gsm7", 1)
		sub, err := carrier.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		parts := partsTo(smsc, m.To)
		Expect(parts).To(ConsistOf(SatisfyAll(HaveField("DataCoding", byte(0x00)), HaveField("Text", m.Body),
			HaveField("From", sender), HaveField("Total", 1), HaveField("RegisteredDelivery", byte(1)), HaveField("ID", sub.CarrierID))))
		Eventually(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }).
			Should(ConsistOf(SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("CarrierID", sub.CarrierID))))
	})

	It("splits a long UCS-2 message into concatenated parts with data_coding 0x08 and reports it delivered once every part is", func(ctx SpecContext) {
		body := strings.Repeat("Ваш автомобиль готов. ", 9) // 198 UTF-16 units: 3 parts of at most 67
		m := message(body, "ucs2", 3)
		withOutcome(m.To, outcome{3: {"", ""}}) // the last part's receipt is held back
		sub, err := carrier.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		parts := partsTo(smsc, m.To)
		Expect(parts).To(HaveLen(3))
		for i, p := range parts {
			Expect(p).To(SatisfyAll(HaveField("DataCoding", byte(0x08)), HaveField("Total", 3), HaveField("Ref", parts[0].Ref)))
			Expect(p.Seq).To(Equal(i + 1))
		}
		Expect(parts[0].Text + parts[1].Text + parts[2].Text).To(Equal(body))
		Expect(sub.CarrierID).To(Equal(parts[0].ID))
		Consistently(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }, "400ms").Should(BeEmpty(),
			"two parts delivered of three is not delivered")
		smsc.SendReceipt(parts[2], "DELIVRD", "000")
		Eventually(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }).
			Should(ConsistOf(SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("CarrierID", parts[0].ID))))
	})

	It("cuts GSM-7 parts at 153 septets without splitting an escaped character, as the core counts them", func(ctx SpecContext) {
		body := strings.Repeat("a", 152) + "€" + strings.Repeat("b", 10) // € is two septets: it starts part 2
		m := message(body, "gsm7", 2)
		_, err := carrier.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		parts := partsTo(smsc, m.To)
		Expect(parts).To(HaveExactElements(HaveField("Text", strings.Repeat("a", 152)), HaveField("Text", "€"+strings.Repeat("b", 10))))
		Expect(parts).To(HaveEach(HaveField("DataCoding", byte(0x00))))
	})

	It("fails a long message as soon as one part fails, once", func(ctx SpecContext) {
		m := message(strings.Repeat("Reminder: your appointment is tomorrow. ", 10), "gsm7", 3)
		withOutcome(m.To, outcome{2: {"UNDELIV", "000"}, 3: {"", ""}})
		_, err := carrier.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }).Should(ConsistOf(SatisfyAll(
			HaveField("Status", carriers.ReceiptFailed), HaveField("FailureReason", carriers.FailureUnreachableCarrier))))
		smsc.SendReceipt(partsTo(smsc, m.To)[2], "DELIVRD", "000")
		Consistently(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }, "300ms").Should(HaveLen(1))
	})

	DescribeTable("maps a receipt's stat and err to the failure reason",
		func(ctx SpecContext, stat, errCode, reason string) {
			m := message("Your car is ready.", "gsm7", 1)
			withOutcome(m.To, outcome{0: {stat, errCode}})
			_, err := carrier.Submit(ctx, m)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }).Should(ConsistOf(SatisfyAll(
				HaveField("Status", carriers.ReceiptFailed), HaveField("FailureReason", reason))))
		},
		Entry("EXPIRED", "EXPIRED", "000", carriers.FailureExpired),
		Entry("REJECTD", "REJECTD", "000", carriers.FailureCarrierFiltered),
		Entry("UNDELIV", "UNDELIV", "000", carriers.FailureUnreachableCarrier),
		Entry("UNDELIV err:001 (unknown subscriber)", "UNDELIV", "001", carriers.FailureInvalidMobileNumber),
		Entry("UNDELIV err:011 (teleservice not provisioned)", "UNDELIV", "011", carriers.FailureLandline),
		Entry("DELETED", "DELETED", "000", carriers.FailureUnknown),
		Entry("UNKNOWN", "UNKNOWN", "000", carriers.FailureUnknown),
		Entry("a stat SMPP does not define", "WHATEVR", "000", carriers.FailureUnknown),
	)

	It("reports ACCEPTD as delivered and ignores ENROUTE", func(ctx SpecContext) {
		m := message("Your car is ready.", "gsm7", 1)
		withOutcome(m.To, outcome{0: {"ENROUTE", "000"}})
		_, err := carrier.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		Consistently(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }, "300ms").Should(BeEmpty())
		smsc.SendReceipt(partsTo(smsc, m.To)[0], "ACCEPTD", "000")
		Eventually(func() []carriers.Receipt { return receiptsOf(reports, m.Reference) }).
			Should(ConsistOf(HaveField("Status", carriers.ReceiptDelivered)))
	})

	It("refuses media, and an invalid destination permanently", func(ctx SpecContext) {
		m := message("Look", "gsm7", 1)
		m.Media = []carriers.Media{{URL: "https://example.com/a.png", ContentType: "image/png"}}
		_, err := carrier.Submit(ctx, m)
		var refused *carriers.SubmitError
		Expect(errors.As(err, &refused)).To(BeTrue())
		Expect(refused.Permanent).To(BeTrue())

		m = message("Hi", "gsm7", 1)
		m.To = "+1 (415) not a number"
		_, err = carrier.Submit(ctx, m)
		Expect(errors.As(err, &refused)).To(BeTrue())
		Expect(refused).To(SatisfyAll(HaveField("Permanent", true), HaveField("Reason", carriers.FailureInvalidMobileNumber)))
	})

	It("maps the SMSC's refusals: an invalid destination fails the message, throttling is retried", func(ctx SpecContext) {
		s := startSMSC(smsctest.Config{Refuse: func(p smsctest.Part) data.CommandStatusType {
			if strings.HasSuffix(p.To, "1") {
				return data.ESME_RINVDSTADR
			}
			return data.ESME_RTHROTTLED
		}})
		c := newCarrier(s, carriertest.NewRecorder(), nil)
		var refused *carriers.SubmitError
		_, err := c.Submit(ctx, carriers.Outbound{Reference: "msg_a", From: sender, To: "+14155550101", Body: "x"})
		Expect(errors.As(err, &refused)).To(BeTrue())
		Expect(refused).To(SatisfyAll(HaveField("Permanent", true), HaveField("Reason", carriers.FailureInvalidMobileNumber)))
		_, err = c.Submit(ctx, carriers.Outbound{Reference: "msg_b", From: sender, To: "+14155550102", Body: "x"})
		Expect(errors.As(err, &refused)).To(BeTrue())
		Expect(refused.Permanent).To(BeFalse())
	})

	It("keeps at most Window submit_sm awaiting an answer", func(ctx SpecContext) {
		s := startSMSC(smsctest.Config{ResponseDelay: 30 * time.Millisecond})
		c := newCarrier(s, carriertest.NewRecorder(), func(cfg *smpp.Config) { cfg.Window = 4 })
		submitAll(ctx, c, 24)
		Expect(s.MaxOutstanding()).To(Equal(4))
	})

	It("sends no more submit_sm per second than Throughput", func(ctx SpecContext) {
		s := startSMSC(smsctest.Config{})
		c := newCarrier(s, carriertest.NewRecorder(), func(cfg *smpp.Config) { cfg.Throughput = 20 })
		start := time.Now()
		submitAll(ctx, c, 11)
		Expect(time.Since(start)).To(BeNumerically(">=", 450*time.Millisecond), "11 at 20/s take at least 0.5 s")
	})

	It("keeps the bind alive with enquire_link", func() {
		s := startSMSC(smsctest.Config{})
		newCarrier(s, carriertest.NewRecorder(), func(cfg *smpp.Config) { cfg.EnquireLink = 100 * time.Millisecond })
		Eventually(s.EnquireLinks).Should(BeNumerically(">=", 3))
	})

	It("does not bind with a wrong password, and keeps trying", func() {
		s := startSMSC(smsctest.Config{Password: "right"})
		c, err := smpp.New(smpp.Config{Addr: s.Addr(), SystemID: "test", Password: "wrong", Store: st.SMPP(), Reporter: reports,
			ReconnectMin: 10 * time.Millisecond, ReconnectMax: 20 * time.Millisecond, Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		c.Start()
		DeferCleanup(c.Close)
		Consistently(c.Bound, "200ms").Should(BeFalse())
		Expect(s.Binds()).To(Equal(0))
	})
})

// submitAll submits n single-part messages at once and expects every one accepted.
func submitAll(ctx SpecContext, c *smpp.Carrier, n int) []carriers.Outbound {
	msgs := make([]carriers.Outbound, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range msgs {
		msgs[i] = message(fmt.Sprintf("Message %d of the batch.", i), "gsm7", 1)
		wg.Go(func() { _, errs[i] = c.Submit(ctx, msgs[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
	return msgs
}

var _ = Describe("Reconnecting", func() {
	It("loses nothing when the SMSC drops the connection mid-stream: every message is delivered exactly once", func(ctx SpecContext) {
		s := startSMSC(smsctest.Config{ResponseDelay: 2 * time.Millisecond})
		rep := carriertest.NewRecorder()
		c := newCarrier(s, rep, nil)
		s.DropAfter(17)
		go func() {
			defer GinkgoRecover()
			Eventually(s.Binds).Should(BeNumerically(">=", 2))
			time.Sleep(20 * time.Millisecond)
			s.Drop() // and once more, while receipts are on their way
		}()
		msgs := submitAll(ctx, c, 60)
		Eventually(s.Binds).Should(BeNumerically(">=", 3))
		bodies := map[string]int{}
		for _, m := range s.Messages() {
			bodies[m.Text]++
		}
		for _, m := range msgs {
			Expect(bodies[m.Body]).To(Equal(1), "accepted once by the SMSC: %s", m.Body)
			Eventually(func() []carriers.Receipt { return receiptsOf(rep, m.Reference) }).
				Should(ConsistOf(HaveField("Status", carriers.ReceiptDelivered)), "one receipt: %s", m.Reference)
		}
		Expect(s.Messages()).To(HaveLen(len(msgs)))
	})

	It("resolves receipts after a restart from the stored part ids, and submits nothing twice", func(ctx SpecContext) {
		s := startSMSC(smsctest.Config{Outcome: func(smsctest.Part) (string, string) { return "", "" }})
		before := carriertest.NewRecorder()
		c := newCarrier(s, before, nil)
		m := message(strings.Repeat("Long message that survives a restart. ", 6), "gsm7", 2)
		first, err := c.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Close()).To(Succeed())

		after := carriertest.NewRecorder()
		restarted := newCarrier(s, after, nil)
		again, err := restarted.Submit(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(SatisfyAll(HaveField("Duplicate", true), HaveField("CarrierID", first.CarrierID)))
		parts := partsTo(s, m.To)
		Expect(s.Parts()).To(HaveLen(2), "nothing was sent again")
		for _, p := range parts {
			s.SendReceipt(p, "DELIVRD", "000")
		}
		Eventually(func() []carriers.Receipt { return receiptsOf(after, m.Reference) }).
			Should(ConsistOf(SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("CarrierID", first.CarrierID))))
		Expect(receiptsOf(before, m.Reference)).To(BeEmpty())
	})
})

var _ = Describe("Inbound messages over SMPP", func() {
	It("reports a handset's message from a deliver_sm", func() {
		from := newHandset()
		Expect(smsc.SendMO(from, sender, "Is my car ready? ¿Sí?")).To(Succeed())
		Eventually(func() []carriers.InboundMessage { return inboundOf(reports, from) }).Should(ConsistOf(SatisfyAll(
			HaveField("To", sender), HaveField("Body", "Is my car ready? ¿Sí?"), HaveField("CarrierID", Not(BeEmpty())),
			HaveField("At", Not(BeZero())))))
	})

	DescribeTable("reassembles a concatenated message into one",
		func(body string) {
			from := newHandset()
			Expect(smsc.SendMO(from, sender, body)).To(Succeed())
			Eventually(func() []carriers.InboundMessage { return inboundOf(reports, from) }).
				Should(ConsistOf(HaveField("Body", body)))
			Consistently(func() []carriers.InboundMessage { return inboundOf(reports, from) }, "200ms").Should(HaveLen(1))
		},
		Entry("in GSM-7", strings.Repeat("Please call me back about the invoice. ", 8)),
		Entry("in UCS-2", strings.Repeat("Перезвоните мне, пожалуйста. ", 8)),
	)

	It("answers the SMSC with a temporary error until the core takes the message, so it is delivered again", func() {
		from := newHandset()
		reports.Refuse("", 5) // inbound reports have no reference; the adapter tries 4 times per deliver_sm
		Expect(smsc.SendMO(from, sender, "HELP")).To(Succeed())
		Eventually(func() []carriers.InboundMessage { return inboundOf(reports, from) }).Should(ConsistOf(HaveField("Body", "HELP")))
	})
})

var _ = Describe("Matching a receipt's id", func() {
	It("tries the decimal and hexadecimal forms of an id, as SMSCs mix them", func() {
		Expect(smpp.IDForms("255")).To(ConsistOf("255", "ff", "FF", "597"))
		Expect(smpp.IDForms("1A2b")).To(ConsistOf("1A2b", "6699"))
		Expect(smpp.IDForms("msg-7")).To(ConsistOf("msg-7"))
	})
})
