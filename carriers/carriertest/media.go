package carriertest

import (
	"io"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
)

// InboundMMS makes the carrier (its fake, or the simulator) deliver a message with one media
// file from a handset to one of the adapter's numbers, through the adapter's inbound path.
type InboundMMS func(ctx SpecContext, from, to, body, contentType string, data []byte)

// inboundMediaSpecs: what the core relies on when it copies an inbound MMS's files. The adapter
// reports the message once, with each file's URL and content type, and the URL gives the file to
// a plain HTTP client, with the carrier's credentials when the adapter is a MediaSource.
func inboundMediaSpecs(h *Harness) {
	Describe("inbound media", func() {
		BeforeEach(func() {
			if h.Inbound == nil {
				Skip(h.Carrier.Name() + ": the harness cannot make the carrier deliver an MMS")
			}
		})

		It("reports an inbound MMS with media whose URL gives the file", func(ctx SpecContext) {
			data := []byte("\x89PNG\r\n\x1a\n a photo of the dent " + newReference("x"))
			from, to := "+14155550177", h.Messaging.From
			if to == "" {
				to = "+18335550100"
			}
			h.Inbound(ctx, from, to, "Here is the dent", "image/png", data)
			var in *carriers.InboundMessage
			Eventually(func() *carriers.InboundMessage {
				for _, r := range h.Reports.Reports() {
					if r.Inbound != nil && r.Inbound.From == from && len(r.Inbound.Media) == 1 && r.Carrier == h.Carrier.Name() {
						in = r.Inbound
					}
				}
				return in
			}).WithTimeout(h.Timeout).ShouldNot(BeNil())
			Expect(in.To).To(Equal(to))
			Expect(in.Media[0].ContentType).To(Equal("image/png"))
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.Media[0].URL, nil)
			Expect(err).NotTo(HaveOccurred())
			if src, ok := h.Carrier.(carriers.MediaSource); ok {
				src.AuthorizeMedia(req)
			}
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(io.ReadAll(resp.Body)).To(Equal(data))
		})
	})
}
