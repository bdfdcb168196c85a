package telnyx_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.jetify.com/typeid"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/telnyx"
	"github.com/switchboard/switchboard/carriers/telnyx/telnyxtest"
)

var handsets atomic.Int64

// lateSubmissions records a submission only once after is closed (or its context done).
type lateSubmissions struct {
	telnyx.Store
	after chan struct{}
}

func (l lateSubmissions) AddSubmission(ctx context.Context, reference, id string, at time.Time) error {
	select {
	case <-l.after:
	case <-ctx.Done():
		return ctx.Err()
	}
	return l.Store.AddSubmission(ctx, reference, id, at)
}

// handset returns a handset number no other spec uses.
func handset() string { return fmt.Sprintf("+1646%07d", handsets.Add(1)) }

var _ = Describe("Telnyx webhooks", func() {
	body := []byte(`{"data":{"event_type":"message.received","id":"e1","payload":{"id":"m1","from":{"phone_number":"+14155550100"},"to":[{"phone_number":"+14155550199"}],"text":"hi"}}}`)
	now := time.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sign := func(key ed25519.PrivateKey, ts string, b []byte) string {
		return base64.StdEncoding.EncodeToString(ed25519.Sign(key, append([]byte(ts+"|"), b...)))
	}

	It("verifies Telnyx's Ed25519 signature of timestamp|body", func() {
		Expect(telnyx.Verify(pub, body, sign(priv, ts, body), ts, now)).To(BeTrue())
	})

	DescribeTable("refuses",
		func(signature, timestamp string, b []byte) {
			Expect(telnyx.Verify(pub, b, signature, timestamp, now)).To(BeFalse())
		},
		Entry("no signature", "", ts, body),
		Entry("another key's signature", func() string { _, other, _ := ed25519.GenerateKey(rand.Reader); return sign(other, ts, body) }(), ts, body),
		Entry("a changed body", sign(priv, ts, body), ts, append([]byte(" "), body...)),
		Entry("another timestamp than signed", sign(priv, ts, body), strconv.FormatInt(now.Unix()+1, 10), body),
		Entry("a timestamp ten minutes old", sign(priv, strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), body),
			strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), body),
	)

	It("answers 403 to an unsigned or wrongly signed webhook, and reports nothing", func() {
		n := len(reports.Reports())
		Expect(fake.PostSigned(webhookURL, body, ts, "")).To(Equal(http.StatusForbidden))
		Expect(fake.PostSigned(webhookURL, body, ts, sign(priv, ts, body))).To(Equal(http.StatusForbidden))
		Expect(reports.Reports()).To(HaveLen(n))
	})
})

var _ = Describe("Telnyx messages", func() {
	It("fails a message Telnyx finalizes as delivery_failed, with the mapped reason", func(ctx SpecContext) {
		to := handset()
		fake.FailTo(to, "40300")
		o := carriers.Outbound{Reference: typeid.Must(typeid.WithPrefix("msg")).String(), From: sender, To: to, Body: "Sale!"}
		sub, err := carrier.Submit(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []carriers.Receipt {
			var out []carriers.Receipt
			for _, r := range reports.Reports() {
				if r.Receipt != nil && r.Receipt.Reference == o.Reference {
					out = append(out, *r.Receipt)
				}
			}
			return out
		}).Should(ConsistOf(SatisfyAll(HaveField("Status", carriers.ReceiptFailed), HaveField("CarrierID", sub.CarrierID),
			HaveField("FailureReason", carriers.FailureOptedOutAtCarrier))))
		Expect(fake.MessagesTo(to)).To(ConsistOf(SatisfyAll(HaveField("MessagingProfileID", Not(BeEmpty())),
			HaveField("WebhookURL", webhookURL+"?reference="+o.Reference))))
	})

	It("reports the receipt of a message whose webhooks come before its submission is recorded", func(ctx SpecContext) {
		// Another adapter, on a fake of its own, records its submissions only once the fake's
		// message.finalized has been handled.
		quick := telnyxtest.New()
		DeferCleanup(quick.Close)
		finalized := make(chan struct{})
		c, err := telnyx.New(telnyx.Config{APIKey: telnyxtest.APIKey, PublicKey: quick.PublicKey,
			MessagingProfileID: telnyxtest.MessagingProfileID, APIBase: quick.URL, PublicURL: publicURL,
			Store: lateSubmissions{Store: st.Telnyx(), after: finalized}, Reporter: reports,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		Expect(err).NotTo(HaveOccurred())
		quick.Webhooks = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			Expect(err).NotTo(HaveOccurred())
			r.Body = io.NopCloser(bytes.NewReader(body))
			c.Handler().ServeHTTP(w, r)
			if bytes.Contains(body, []byte(`"event_type":"message.finalized"`)) {
				close(finalized)
			}
		})
		Expect(c.ProvisionNumber(ctx, sender)).To(Succeed())
		o := carriers.Outbound{Reference: typeid.Must(typeid.WithPrefix("msg")).String(), From: sender, To: handset(), Body: "Quick!"}
		sub, err := c.Submit(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		var got []carriers.Receipt
		for _, r := range reports.Reports() {
			if r.Receipt != nil && r.Receipt.Reference == o.Reference {
				got = append(got, *r.Receipt)
			}
		}
		Expect(got).To(ConsistOf(SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("CarrierID", sub.CarrierID))))
	})

	It("refuses a message to an invalid number at once, permanently", func(ctx SpecContext) {
		o := carriers.Outbound{Reference: typeid.Must(typeid.WithPrefix("msg")).String(), From: sender, To: "12345", Body: "Hi"}
		_, err := carrier.Submit(ctx, o)
		var se *carriers.SubmitError
		Expect(err).To(BeAssignableToTypeOf(se))
		Expect(err.(*carriers.SubmitError)).To(SatisfyAll(HaveField("Permanent", true), HaveField("Reason", carriers.FailureInvalidMobileNumber)))
	})
})

var _ = Describe("Telnyx numbers and campaigns", func() {
	It("assigns a number to an approved campaign and takes it off again", func(ctx SpecContext) {
		c := campaign()
		Expect(carrier.SubmitCampaign(ctx, c)).To(Succeed())
		Eventually(func() []carriers.Verdict { return reports.Verdicts(c.Reference) }).Should(ConsistOf(HaveField("Approved", true)))
		id, err := carrier.RegistrationID(ctx, c.Reference)
		Expect(err).NotTo(HaveOccurred())
		Expect(carrier.AssignNumber(ctx, c.Reference, sender)).To(Succeed())
		Expect(fake.Assigned(sender)).To(Equal(id))
		Expect(carrier.UnassignNumber(ctx, c.Reference, sender)).To(Succeed())
		Expect(fake.Assigned(sender)).To(BeEmpty())
		Expect(carrier.UnassignNumber(ctx, c.Reference, sender)).To(Succeed(), "a number not assigned is no error")
	})

	It("keeps Telnyx's reasons for rejecting a campaign", func(ctx SpecContext) {
		c := campaign()
		c.Description = "Deals. REJECTME"
		Expect(carrier.SubmitCampaign(ctx, c)).To(Succeed())
		Eventually(func() []carriers.Verdict { return reports.Verdicts(c.Reference) }).
			Should(ConsistOf(HaveField("Reason", ContainSubstring("The message samples do not match the use case"))))
	})
})
