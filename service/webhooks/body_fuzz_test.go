package webhooks_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// FuzzBody checks Body against json.Marshal of the envelope for any event data: the same bytes,
// or an error from both. Body appends data that it recognises as already canonical without
// compacting it again, so its recogniser must never accept what json.Marshal would write
// differently.
func FuzzBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,-0.5,2e10,true,null,"x\u00e9\n"]}`, `{ "a" : 1 }`, `[01]`, `"<&>"`,
		"\"a\u2028b\"", `["\x"]`, "[\"\xff\"]", `1.`, `{"a":1,}`, `[[[[]]]]`, ``} {
		f.Add(s)
	}
	at := time.Date(2026, 11, 25, 3, 30, 0, 123000, time.UTC)
	f.Fuzz(func(t *testing.T, data string) {
		e := store.Event{AccountID: "acct_01J", Type: "message.delivered", CreatedAt: at, Data: data}
		want, wantErr := json.Marshal(struct {
			AccountID string          `json:"account_id"`
			Type      string          `json:"type"`
			Timestamp time.Time       `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}{e.AccountID, e.Type, e.CreatedAt, json.RawMessage(data)})
		got, err := webhooks.Body(&e)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("data %q: Body's error %v, json.Marshal's %v", data, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("data %q:\n Body         %s\n json.Marshal %s", data, got, want)
		}
	})
}
