package webhooks_test

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("a webhook's body", func() {
	// marshalled is the body as json.Marshal writes the envelope: what WebhookBody must give.
	marshalled := func(e *store.Event) ([]byte, error) {
		return json.Marshal(struct {
			AccountID string          `json:"account_id"`
			Type      string          `json:"type"`
			Timestamp time.Time       `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}{e.AccountID, e.Type, e.CreatedAt.UTC(), json.RawMessage(e.Data)})
	}
	at := time.Date(2026, 11, 24, 20, 30, 1, 123456000, time.UTC)

	DescribeTable("is json.Marshal's envelope of the event, byte for byte",
		func(e store.Event) {
			want, wantErr := marshalled(&e)
			got, err := webhooks.Body(&e)
			if wantErr != nil {
				Expect(err).To(HaveOccurred())
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(string(want)))
		},
		Entry("a message event", store.Event{AccountID: "acct_01J", Type: "message.delivered", CreatedAt: at,
			Data: `{"id":"msg_1","body":"Hi","conversation":{"id":"cnv_1","contact":{"phone_number":"+15555550100"}},"status":"delivered"}`}),
		Entry("whole seconds", store.Event{AccountID: "acct_01J", Type: "message.sent", CreatedAt: at.Truncate(time.Second), Data: `{}`}),
		Entry("microseconds with trailing zeros", store.Event{AccountID: "a", Type: "t", CreatedAt: at.Truncate(time.Millisecond), Data: `{}`}),
		Entry("a time in another zone", store.Event{AccountID: "a", Type: "t", CreatedAt: at.In(time.FixedZone("X", -5*3600)), Data: `{}`}),
		Entry("data with spaces and newlines", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: "{ \"a\" : [1, 2 ,\n3],\t\"b\": \"x y\" }\n"}),
		Entry("data with HTML characters", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{"body":"<b>Tom & Jerry</b>"}`}),
		Entry("data with line and paragraph separators", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: "{\"body\":\"a\u2028b\u2029c\"}"}),
		Entry("data with escapes and non-ASCII text", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{"body":"caf\u00e9 café \"q\" \\ 😀 \ud83d\ude00"}`}),
		Entry("data that is a JSON number", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `1.50`}),
		Entry("an account id with HTML characters", store.Event{AccountID: "a<&>", Type: "t", CreatedAt: at, Data: `{}`}),
		Entry("a type with a quote", store.Event{AccountID: "a", Type: `t"x`, CreatedAt: at, Data: `{}`}),
		Entry("an account id that is not ASCII", store.Event{AccountID: "compte-é", Type: "t", CreatedAt: at, Data: `{}`}),
		Entry("a year past 9999", store.Event{AccountID: "a", Type: "t", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Data: `{}`}),
		Entry("data that is not JSON", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{"a":`}),
		Entry("empty data", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: ``}),
		Entry("compact data of every kind", store.Event{AccountID: "a", Type: "t", CreatedAt: at,
			Data: `{"a":[1,-0.5,2e10,3E-2,4e+1,0,-0],"b":{"c":true,"d":false,"e":null,"f":{}},"g":[],"h":"\u00e9\n\"\/\\"}`}),
		Entry("compact data nested deeper than the fast path follows", store.Event{AccountID: "a", Type: "t", CreatedAt: at,
			Data: strings.Repeat("[", 100) + strings.Repeat("]", 100)}),
		Entry("data with a trailing space", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{"a":1} `}),
		Entry("data with a space inside", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{"a": 1}`}),
		Entry("data with two values", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{}{}`}),
		Entry("data with a trailing comma", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `[1,]`}),
		Entry("data with a trailing comma in an object", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{"a":1,}`}),
		Entry("data with a key that is not a string", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `{a:1}`}),
		Entry("data with a leading zero", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `[01]`}),
		Entry("data with a bare point", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `[1.]`}),
		Entry("data with a bare minus", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `[-]`}),
		Entry("data with an empty exponent", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `[1e]`}),
		Entry("data with a cut literal", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `[tru]`}),
		Entry("data with a bad escape", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `["\x"]`}),
		Entry("data with a short unicode escape", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `["\u12"]`}),
		Entry("data with a control character in a string", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: "[\"a\tb\"]"}),
		Entry("data with an unterminated string", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: `["abc`}),
		Entry("data with invalid UTF-8", store.Event{AccountID: "a", Type: "t", CreatedAt: at, Data: "[\"\xff\xfe\"]"}),
	)
})
