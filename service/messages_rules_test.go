package service

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// Unit specs of the messaging rules that need no database; the API specs in server/ cover them
// end to end.
var _ = Describe("Messaging rules", func() {
	DescribeTable("classifies a whole inbound message as a keyword, in any case",
		func(body string, want int) {
			Expect(classifyKeyword(body)).To(Equal(want))
		},
		Entry("STOP", "STOP", keywordOptOut),
		Entry("stop", "stop", keywordOptOut),
		Entry("StopAll", "StopAll", keywordOptOut),
		Entry("UNSUBSCRIBE", "UNSUBSCRIBE", keywordOptOut),
		Entry("cancel", "cancel", keywordOptOut),
		Entry("End with blanks", "  End\n", keywordOptOut),
		Entry("QUIT", "QUIT", keywordOptOut),
		Entry("START", "START", keywordOptIn),
		Entry("unstop", "unstop", keywordOptIn),
		Entry("Yes", "Yes", keywordOptIn),
		Entry("HELP", "HELP", keywordHelp),
		Entry("info", "info", keywordHelp),
		Entry("a keyword inside a sentence", "please stop", keywordNone),
		Entry("a keyword with punctuation", "STOP!", keywordNone),
		Entry("empty", "", keywordNone),
	)

	DescribeTable("paces each number type at its default rate, and not at all when negative",
		func(p Pacing, numberType string, want time.Duration) {
			Expect(p.withDefaults().interval(numberType)).To(Equal(want))
		},
		Entry("local: 10/s", Pacing{}, store.NumberLocal, 100*time.Millisecond),
		Entry("toll-free: 3/s", Pacing{}, store.NumberTollFree, time.Second/3),
		Entry("short code: 100/s", Pacing{}, store.NumberShortCode, 10*time.Millisecond),
		Entry("demo: 1/s", Pacing{}, store.NumberDemo, time.Second),
		Entry("configured", Pacing{Local: 50}, store.NumberLocal, 20*time.Millisecond),
		Entry("unpaced", Pacing{Local: -1}, store.NumberLocal, time.Duration(0)),
	)

	DescribeTable("types an attachment by its content type",
		func(contentType, want string) {
			Expect(AttachmentType(contentType)).To(Equal(want))
		},
		Entry("PNG", "image/png", AttachmentImage),
		Entry("JPEG with parameters", "image/jpeg; charset=binary", AttachmentImage),
		Entry("MP4", "video/mp4", AttachmentVideo),
		Entry("vCard", "text/vcard", AttachmentContact),
		Entry("old vCard", "text/x-vcard", AttachmentContact),
		Entry("PDF", "application/pdf", AttachmentFile),
		Entry("nothing", "", AttachmentFile),
	)

	DescribeTable("guesses an attachment's type from its URL until it is fetched",
		func(url, want string) {
			Expect(guessAttachmentType(url)).To(Equal(want))
		},
		Entry("a .png", "https://cdn.example.com/car.png?v=2", AttachmentImage),
		Entry("a .mp4", "https://cdn.example.com/clip.mp4", AttachmentVideo),
		Entry("a .vcf", "https://cdn.example.com/card.vcf", AttachmentContact),
		Entry("no extension", "https://cdn.example.com/download", AttachmentFile),
	)

	Describe("send validation", func() {
		m := &Messages{}
		now := time.Now()
		str := func(s string) *string { return &s }
		DescribeTable("refuses a malformed send with the field at fault",
			func(p SendParams, typ, field string) {
				_, _, _, err := m.validate(p, now)
				Expect(err).To(HaveOccurred())
				se := err.(*Error)
				Expect(se.Type).To(Equal(typ))
				if field != "" {
					Expect(se.Detail).To(HaveKey(field))
				}
			},
			Entry("both shapes", SendParams{To: str("+14155550123"), Body: str("x"), Conversation: &ConversationParams{Contact: ContactParams{PhoneNumber: "+14155550123"}}}, TypeValidation, "to"),
			Entry("no recipient", SendParams{Body: str("x")}, TypeValidation, "to"),
			Entry("no body nor attachments", SendParams{To: str("+14155550123")}, TypeValidation, "body"),
			Entry("a NUL in the body", SendParams{To: str("+14155550123"), Body: str("a\x00b")}, TypeValidation, "body"),
			Entry("too long", SendParams{To: str("+14155550123"), Body: str(strings.Repeat("a", 1601))}, TypeMessageTooLong, ""),
			Entry("too far ahead", SendParams{To: str("+14155550123"), Body: str("x"), SendAt: ptr(now.Add(61 * 24 * time.Hour))}, TypeValidation, "send_at"),
			Entry("a recipient that is no number", SendParams{To: str("+1415"), Body: str("x")}, TypeValidation, "to"),
		)

		It("normalises the recipient and takes the sender of either shape", func() {
			to, from, c, err := m.validate(SendParams{Conversation: &ConversationParams{
				Contact: ContactParams{PhoneNumber: "+14155550123", FirstName: str("Mia")}, PhoneNumber: str("+14155550100")},
				Body: str("Hi")}, now)
			Expect(err).NotTo(HaveOccurred())
			Expect([]string{to, from, *c.FirstName}).To(Equal([]string{"+14155550123", "+14155550100", "Mia"}))
		})
	})
})

func ptr[T any](v T) *T { return &v }
