package webhooks_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// marshalled is d through AppendJSON, and through json.Marshal.
func marshalled(d webhooks.MessageData) (got string, ok bool, want string, wantErr error) {
	b, ok := d.AppendJSON(nil)
	w, err := json.Marshal(d)
	return string(b), ok, string(w), err
}

var _ = Describe("The data of message events", func() {
	// Text that json.Marshal escapes: HTML, controls, quotes, invalid UTF-8, U+2028/9, non-ASCII.
	texts := []string{"", "plain", `q"uo\te`, "<b>&amp;</b>", "a\x00b\x01\x1f\x7f", "\b\f\n\r\t", "\xff\xfe", "a\xc3",
		"\u2028\u2029", "é 日本 🎉", "\xed\xa0\x80", "end\\"}
	str := func(s string) *string { return &s }
	at := func(t time.Time) *time.Time { return &t }
	full := func(r *rand.Rand) webhooks.MessageData {
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
			return str(text())
		}
		meta := func() store.Metadata {
			switch r.IntN(4) {
			case 0:
				return nil
			case 1:
				return store.Metadata{}
			}
			m := store.Metadata{}
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
			return at(when())
		}
		var atts []webhooks.Attachment
		if r.IntN(3) > 0 {
			atts = []webhooks.Attachment{}
			for range r.IntN(3) {
				atts = append(atts, webhooks.Attachment{ID: text(), Type: text(), URL: text(), Status: text()})
			}
		}
		return webhooks.MessageData{ID: text(), Status: text(), Direction: text(), Body: opt(), Attachments: atts, BlastID: opt(),
			Conversation: webhooks.Conversation{ID: text(),
				Contact: webhooks.Contact{ID: text(), PhoneNumber: text(), Email: opt(), FirstName: opt(), LastName: opt(),
					Metadata: meta(), OutboundDisabled: r.IntN(2) == 0, OptedOut: r.IntN(2) == 0, CreatedAt: when()},
				PhoneNumber: webhooks.PhoneNumber{ID: text(), Metadata: meta(), Name: opt(), Number: text(), Type: text()}},
			Metadata: meta(), Encoding: text(), Segments: r.IntN(20) - 5, Type: text(), CreatedAt: when(),
			SendAt: optTime(), SentAt: optTime(), DeliveredAt: optTime(), FailedAt: optTime(), ReceivedAt: optTime(),
			FailureReason: opt()}
	}

	It("are json.Marshal's bytes", func() {
		r := rand.New(rand.NewPCG(21, 1))
		for range 5000 {
			d := full(r)
			got, ok, want, err := marshalled(d)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
			Expect(got).To(Equal(want))
		}
	})

	It("give up where json.Marshal fails: a year past 9999 or before 0", func() {
		r := rand.New(rand.NewPCG(21, 2))
		for _, bad := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
			for _, set := range []func(d *webhooks.MessageData){
				func(d *webhooks.MessageData) { d.CreatedAt = bad },
				func(d *webhooks.MessageData) { d.Conversation.Contact.CreatedAt = bad },
				func(d *webhooks.MessageData) { d.DeliveredAt = &bad },
			} {
				d := full(r)
				set(&d)
				_, ok, _, err := marshalled(d)
				Expect(err).To(HaveOccurred())
				Expect(ok).To(BeFalse())
			}
		}
	})

	It("and of conversation.created are json.Marshal's bytes too", func() {
		r := rand.New(rand.NewPCG(21, 7))
		for range 2000 {
			m := full(r)
			d := webhooks.ConversationCreatedData{ID: m.Conversation.ID, PhoneNumber: m.Conversation.PhoneNumber, Contact: m.Conversation.Contact}
			got, ok := d.AppendJSON(nil)
			want, err := json.Marshal(d)
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
			Expect(string(got)).To(Equal(string(want)))
		}
		d := webhooks.ConversationCreatedData{Contact: webhooks.Contact{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}
		_, ok := d.AppendJSON(nil)
		Expect(ok).To(BeFalse())
	})

	It("write every field of their types (a new field must be added to AppendJSON)", func() {
		for t, fields := range map[reflect.Type]int{reflect.TypeFor[webhooks.MessageData](): 18, reflect.TypeFor[webhooks.Conversation](): 3,
			reflect.TypeFor[webhooks.ConversationCreatedData](): 3,
			reflect.TypeFor[webhooks.Contact]():                 9, reflect.TypeFor[webhooks.PhoneNumber](): 5, reflect.TypeFor[webhooks.Attachment](): 4} {
			Expect(t.NumField()).To(Equal(fields), "%s", t)
		}
	})

	It("are what store.NewEvent records", func() {
		d := full(rand.New(rand.NewPCG(21, 3)))
		e, err := store.NewEvent("prj_1", "acct_1", webhooks.EventMessageSent, d)
		Expect(err).NotTo(HaveOccurred())
		want, err := json.Marshal(d)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Data).To(Equal(string(want)))
		d.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		_, err = store.NewEvent("prj_1", "acct_1", webhooks.EventMessageSent, d)
		Expect(err).To(HaveOccurred())
	})
})

// FuzzMessageDataJSON checks AppendJSON against json.Marshal for any text in a message's fields.
func FuzzMessageDataJSON(f *testing.F) {
	for _, s := range []string{"", "<&>", "a\u2028b", "\xff", "\x00\x1f", `"\`, "é🎉"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		d := webhooks.MessageData{ID: a, Body: &b, Metadata: store.Metadata{a: b, b: a},
			Conversation: webhooks.Conversation{Contact: webhooks.Contact{FirstName: &a, Metadata: store.Metadata{}}}}
		got, ok := d.AppendJSON(nil)
		want, err := json.Marshal(d)
		if !ok || err != nil || string(got) != string(want) {
			t.Fatalf("%q %q:\n AppendJSON   %s (%v)\n json.Marshal %s (%v)", a, b, got, ok, want, err)
		}
	})
}

// BenchmarkMessageData records the data of a message.delivered event as the e2e load's message
// has it, through store.NewEvent (AppendJSON) and through json.Marshal, as NewEvent did before.
func BenchmarkMessageData(b *testing.B) {
	at := time.Date(2026, 11, 25, 12, 30, 1, 123456000, time.UTC)
	body, name := "Load test message 1", "Main line"
	d := webhooks.MessageData{ID: "msg_01jtd3sj8hq6jb21f6fm51s06z", Status: "delivered", Direction: "outbound", Body: &body,
		Attachments: []webhooks.Attachment{}, Conversation: webhooks.Conversation{ID: "cnv_01jjw2n435vj24qtdb3c2wqrbg",
			Contact: webhooks.Contact{ID: "ctc_01jjw2n435vj24qtdb3c2wqrbh", PhoneNumber: "+15550000123", Metadata: store.Metadata{},
				CreatedAt: at},
			PhoneNumber: webhooks.PhoneNumber{ID: "pn_01jjw2n435vj24qtdb3c2wqrbj", Metadata: store.Metadata{}, Name: &name,
				Number: "+14155550100", Type: "local"}},
		Metadata: store.Metadata{}, Encoding: "gsm7", Segments: 1, Type: "sms", CreatedAt: at, SentAt: &at, DeliveredAt: &at}
	b.Run("NewEvent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := store.NewEvent("prj_1", "acct_1", webhooks.EventMessageDelivered, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
