package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
)

// handsetSendsMedia makes a handset send an MMS whose files are at the carrier's media URLs.
func handsetSendsMedia(from, to, body string, media ...carriers.Media) {
	c, err := core.Carriers.Get(sim.Name)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	_, err = c.(*sim.Carrier).Inbound(context.Background(), from, to, body, media)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

var _ = Describe("Inbound media", func() {
	var (
		t      *tenant
		acct   string
		number string
		// carrierMedia stands for the carrier's media store: /ok.jpg answers a JPEG, /gone 500
		// every time; fetches counts the requests.
		carrierMedia *httptest.Server
		fetches      atomic.Int64
	)
	jpeg := []byte("\xff\xd8\xff\xe0 a photo of the dent")
	BeforeEach(func() {
		t, acct, _, number = newSendingAccount()
		fetches.Store(0)
		carrierMedia = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetches.Add(1)
			if r.URL.Path != "/ok.jpg" {
				http.Error(w, "try later", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = w.Write(jpeg)
		}))
		DeferCleanup(carrierMedia.Close)
	})

	// received waits for the message.received event of the message with body, and returns its data.
	received := func(body string, timeout time.Duration) map[string]any {
		var got map[string]any
		EventuallyWithOffset(1, func() map[string]any {
			for _, e := range t.events("message.received") {
				if e["body"] == body {
					got = e
				}
			}
			return got
		}).WithTimeout(timeout).ShouldNot(BeNil())
		return got
	}

	It("copies the files before message.received and serves them through our signed URL, never the carrier's", func() {
		handsetSendsMedia(newHandset(), number, "Here is the dent", carriers.Media{URL: carrierMedia.URL + "/ok.jpg", ContentType: "image/jpeg"})
		e := received("Here is the dent", 10*time.Second)
		Expect(e["attachments"]).To(ConsistOf(SatisfyAll(HaveKeyWithValue("type", "image"), HaveKeyWithValue("status", "available"))))
		msg := t.get("/messages/" + e["id"].(string))
		Expect(msg.String()).NotTo(ContainSubstring(carrierMedia.URL))
		att := msg.JSON()["attachments"].([]any)[0].(map[string]any)
		Expect(att).To(HaveKeyWithValue("status", "available"))
		r := t.get(strings.TrimPrefix(att["url"].(string), "https://switchboard.test"))
		Expect(r).To(HaveStatus(http.StatusFound))
		file := t.withKey("").get(strings.TrimPrefix(r.Header.Get("Location"), "https://switchboard.test"))
		Expect(file).To(HaveStatus(http.StatusOK))
		Expect(file.Body).To(Equal(jpeg))
		Expect(file.Header.Get("Content-Type")).To(Equal("image/jpeg"))
		Expect(fetches.Load()).To(Equal(int64(1)))
	})

	It("retries a file the carrier does not give, then reports it unavailable in message.received, keeping the others", func() {
		handsetSendsMedia(newHandset(), number, "Two photos",
			carriers.Media{URL: carrierMedia.URL + "/ok.jpg", ContentType: "image/jpeg"},
			carriers.Media{URL: carrierMedia.URL + "/gone", ContentType: "image/png"})
		// Nothing is reported while the carrier may still give the file.
		Consistently(func() []map[string]any { return t.events("message.received") }).WithTimeout(500 * time.Millisecond).Should(BeEmpty())
		var pending map[string]any
		for _, m := range t.get("/accounts/" + acct + "/messages").JSON()["data"].([]any) {
			pending = m.(map[string]any)
		}
		Expect(pending["direction"]).To(Equal("inbound"))
		e := received("Two photos", 60*time.Second)
		Expect(e["attachments"]).To(HaveExactElements(HaveKeyWithValue("status", "available"), HaveKeyWithValue("status", "unavailable")))
		Expect(fetches.Load()).To(Equal(int64(1+3)), "the good file once, the missing one on each of the three attempts")
		gone := e["attachments"].([]any)[1].(map[string]any)
		Expect(t.get(strings.TrimPrefix(gone["url"].(string), "https://switchboard.test"))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/messages/" + e["id"].(string)).String()).NotTo(ContainSubstring(carrierMedia.URL))
		Expect(t.events("message.received")).To(HaveLen(1), "reported once")
	})

	It("answers 404 for a file still being fetched, rather than the carrier's URL", func() {
		handsetSendsMedia(newHandset(), number, "Slow photo", carriers.Media{URL: carrierMedia.URL + "/gone", ContentType: "image/png"})
		var att map[string]any
		Eventually(func() []any {
			data := t.get("/accounts/" + acct + "/messages").JSON()["data"].([]any)
			if len(data) == 0 {
				return nil
			}
			atts := data[0].(map[string]any)["attachments"].([]any)
			if len(atts) > 0 {
				att = atts[0].(map[string]any)
			}
			return atts
		}).Should(HaveLen(1))
		Expect(att).To(HaveKeyWithValue("status", "pending"))
		r := t.get(strings.TrimPrefix(att["url"].(string), "https://switchboard.test"))
		Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(r.String()).NotTo(ContainSubstring(carrierMedia.URL))
	})
})
