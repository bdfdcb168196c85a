package server

import (
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen"
)

var _ = Describe("The answer to a send", func() {
	texts := []string{"", "plain", `q"uo\te`, "<b>&amp;</b>", "a\x00b\x01\x1f\x7f", "\b\f\n\r\t", "\xff\xfe", "a\xc3",
		"\u2028\u2029", "é 日本 🎉", "end\\"}
	emails := []string{"a@example.com", "Ann <ann@example.com>", "not an address", "ü@example.com"}
	message := func(r *rand.Rand) gen.Message {
		text := func() string {
			var b strings.Builder
			for range r.IntN(4) {
				b.WriteString(texts[r.IntN(len(texts))])
			}
			return b.String()
		}
		opt := func() *string {
			if r.IntN(3) == 0 {
				return nil
			}
			s := text()
			return &s
		}
		meta := func() gen.Metadata {
			switch r.IntN(4) {
			case 0:
				return nil
			case 1:
				return gen.Metadata{}
			}
			m := gen.Metadata{}
			for range 1 + r.IntN(20) {
				m[text()] = text()
			}
			return m
		}
		when := func() time.Time {
			zones := []*time.Location{time.UTC, time.FixedZone("X", -(9*3600 + 30*60)), time.FixedZone("Y", 14*3600)}
			return time.Unix(r.Int64N(4_000_000_000), r.Int64N(1e9)*int64(r.IntN(2))).In(zones[r.IntN(len(zones))])
		}
		optTime := func() *time.Time {
			if r.IntN(2) == 0 {
				return nil
			}
			t := when()
			return &t
		}
		var atts []gen.Attachment
		if r.IntN(3) > 0 {
			atts = []gen.Attachment{}
			for range r.IntN(3) {
				a := gen.Attachment{Id: text(), Type: gen.AttachmentType(text()), Url: text()}
				if r.IntN(2) == 0 {
					s := gen.AttachmentStatus(text())
					a.Status = &s
				}
				atts = append(atts, a)
			}
		}
		var email *openapi_types.Email
		if r.IntN(4) == 0 {
			e := openapi_types.Email(emails[r.IntN(len(emails))])
			email = &e
		}
		var reason *gen.FailureReason
		if r.IntN(3) == 0 {
			f := gen.FailureReason(text())
			reason = &f
		}
		return gen.Message{Attachments: atts, BlastId: opt(), Body: opt(),
			Conversation: gen.MessageConversation{Id: text(),
				Contact: gen.Contact{CreatedAt: when(), Email: email, FirstName: opt(), Id: text(), LastName: opt(), Metadata: meta(),
					OptedOut: r.IntN(2) == 0, OutboundDisabled: r.IntN(2) == 0, PhoneNumber: text()},
				PhoneNumber: gen.ConversationPhoneNumber{Id: text(), Metadata: meta(), Name: opt(), Number: text(),
					Type: gen.PhoneNumberType(text())}},
			CreatedAt: when(), DeliveredAt: optTime(), Direction: gen.MessageDirection(text()), Encoding: gen.MessageEncoding(text()),
			FailedAt: optTime(), FailureReason: reason, Id: text(), Metadata: meta(), ReceivedAt: optTime(), Segments: r.IntN(20) - 5,
			SendAt: optTime(), SentAt: optTime(), Status: gen.MessageStatus(text()), Type: gen.MessageType(text())}
	}
	// answers is the status, header and body of m's 201, as sentMessage and as the generated code
	// write them.
	answers := func(m gen.Message) (got, want *httptest.ResponseRecorder, gotErr, wantErr error) {
		got, want = httptest.NewRecorder(), httptest.NewRecorder()
		gotErr = sentMessage(m).VisitSendMessageResponse(got)
		wantErr = gen.SendMessage201JSONResponse(m).VisitSendMessageResponse(want)
		return got, want, gotErr, wantErr
	}

	It("is the generated answer, byte for byte", func() {
		r := rand.New(rand.NewPCG(21, 4))
		for range 5000 {
			got, want, gotErr, wantErr := answers(message(r))
			Expect(gotErr == nil).To(Equal(wantErr == nil), "%v / %v", gotErr, wantErr)
			Expect(got.Code).To(Equal(want.Code))
			Expect(got.Header()).To(Equal(want.Header()))
			Expect(got.Body.String()).To(Equal(want.Body.String()))
		}
	})

	It("fails as the generated answer does: a year past 9999, an email that does not parse", func() {
		r := rand.New(rand.NewPCG(21, 5))
		bad := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		notEmail := openapi_types.Email("not an address")
		for _, set := range []func(m *gen.Message){
			func(m *gen.Message) { m.CreatedAt = bad },
			func(m *gen.Message) { m.Conversation.Contact.CreatedAt = bad },
			func(m *gen.Message) { m.SentAt = &bad },
			func(m *gen.Message) { m.Conversation.Contact.Email = &notEmail },
		} {
			m := message(r)
			set(&m)
			got, want, gotErr, wantErr := answers(m)
			Expect(gotErr).To(HaveOccurred())
			Expect(wantErr).To(HaveOccurred())
			Expect(got.Code).To(Equal(want.Code))
			Expect(got.Body.String()).To(Equal(want.Body.String()))
		}
	})

	It("writes every field of the message's types (a new field must be added to appendMessageJSON)", func() {
		for t, fields := range map[reflect.Type]int{reflect.TypeFor[gen.Message](): 18, reflect.TypeFor[gen.MessageConversation](): 3,
			reflect.TypeFor[gen.Contact](): 9, reflect.TypeFor[gen.ConversationPhoneNumber](): 5, reflect.TypeFor[gen.Attachment](): 4} {
			Expect(t.NumField()).To(Equal(fields), "%s", t)
		}
	})
})

// BenchmarkSentMessage writes the 201 of the e2e load's send, as sentMessage and as the generated
// code did.
func BenchmarkSentMessage(b *testing.B) {
	at := time.Date(2026, 11, 25, 12, 30, 1, 123456000, time.UTC)
	body, name := "Load test message 1", "Main line"
	m := gen.Message{Attachments: []gen.Attachment{}, Body: &body, Conversation: gen.MessageConversation{Id: "cnv_01jjw2n435vj24qtdb3c2wqrbg",
		Contact: gen.Contact{CreatedAt: at, Id: "ctc_01jjw2n435vj24qtdb3c2wqrbh", Metadata: gen.Metadata{}, PhoneNumber: "+15550000123"},
		PhoneNumber: gen.ConversationPhoneNumber{Id: "pn_01jjw2n435vj24qtdb3c2wqrbj", Metadata: gen.Metadata{}, Name: &name,
			Number: "+14155550100", Type: "local"}},
		CreatedAt: at, Direction: "outbound", Encoding: "gsm7", Id: "msg_01jtd3sj8hq6jb21f6fm51s06z", Metadata: gen.Metadata{},
		Segments: 1, Status: "queued", Type: "sms"}
	w := httptest.NewRecorder()
	b.Run("sentMessage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.Body.Reset()
			clear(w.Header())
			_ = sentMessage(m).VisitSendMessageResponse(w)
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.Body.Reset()
			clear(w.Header())
			_ = gen.SendMessage201JSONResponse(m).VisitSendMessageResponse(w)
		}
	})
}
