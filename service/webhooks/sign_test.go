package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("a webhook's signatures", func() {
	// reference signs as the Standard Webhooks scheme says, with HMACs keyed afresh.
	reference := func(secrets []string, id string, at time.Time, body []byte) (string, string) {
		ts := strconv.FormatInt(at.Unix(), 10)
		std, svc := []string{}, []string{"t=" + ts}
		for _, s := range secrets {
			key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
			Expect(err).NotTo(HaveOccurred())
			m := hmac.New(sha256.New, key)
			m.Write([]byte(id + "." + ts + "." + string(body)))
			std = append(std, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
			m = hmac.New(sha256.New, key)
			m.Write([]byte(ts + "." + string(body)))
			svc = append(svc, "v1="+hex.EncodeToString(m.Sum(nil)))
		}
		return strings.Join(std, " "), strings.Join(svc, ",")
	}

	It("are the HMAC-SHA256 of each secret, however many attempts sign at once with the same secrets", func() {
		var secrets []string
		for range 3 {
			s, err := webhooks.NewSecret()
			Expect(err).NotTo(HaveOccurred())
			secrets = append(secrets, s)
		}
		at := time.Unix(1_780_000_000, 0)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					sub := secrets[:1+(g+i)%3]
					id, body := fmt.Sprintf("evt_%d_%d", g, i), []byte(fmt.Sprintf(`{"n":%d}`, i))
					std, svc, err := webhooks.Sign(sub, id, at, body)
					wantStd, wantSvc := reference(sub, id, at, body)
					if err != nil || std != wantStd || svc != wantSvc {
						errs <- fmt.Errorf("%s: got %q %q (%v), want %q %q", id, std, svc, err, wantStd, wantSvc)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		Expect(errs).To(BeEmpty())
	})

	It("refuse a secret that is not base64", func() {
		_, _, err := webhooks.Sign([]string{"whsec_not base64!"}, "evt_1", time.Now(), []byte("{}"))
		Expect(err).To(MatchError(ContainSubstring("not whsec_ and base64")))
	})
})

// BenchmarkAttemptBody is the CPU of a webhook attempt's body and signatures (Body, then Sign with
// one secret), for a message.delivered event as the store holds it.
func BenchmarkAttemptBody(b *testing.B) {
	secret, _ := webhooks.NewSecret()
	ev := store.Event{ID: "evt_01kaxq3v7qf3tr8n2y4c9w5m1z", AccountID: "acct_01kaxq3v7qf3tr8n2y4c9w5m1z", Type: "message.delivered",
		CreatedAt: time.Date(2026, 11, 25, 1, 2, 3, 456789000, time.UTC),
		Data: `{"id":"msg_01kaxq3v7qf3tr8n2y4c9w5m1z","body":"Your code is 123456","attachments":[],` +
			`"conversation":{"id":"cnv_01kaxq3v7qf3tr8n2y4c9w5m1z","contact":{"id":"ctc_01kaxq3v7qf3tr8n2y4c9w5m1z",` +
			`"first_name":null,"last_name":null,"phone_number":"+15555550100"},"phone_number":{"id":"pn_01kaxq3v7qf3tr8n2y4c9w5m1z",` +
			`"number":"+15555550199","type":"local"}},"status":"delivered","delivered_at":"2026-11-25T01:02:03.456789Z"}`}
	b.ReportAllocs()
	for b.Loop() {
		body, err := webhooks.Body(&ev)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := webhooks.Sign([]string{secret}, ev.ID, ev.CreatedAt, body); err != nil {
			b.Fatal(err)
		}
	}
}
