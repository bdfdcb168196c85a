package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// fuzzFixture is a server over a fresh SQLite store with one project, its live key, an account
// and a user, for the fuzz targets.
type fuzzFixture struct {
	api     *server.Server
	st      *store.Store
	project string
	key     string
	account *store.Account
	user    *store.User
}

func newFuzzFixture(f *testing.F) *fuzzFixture {
	ctx := context.Background()
	st, cleanup, err := store.OpenTest(ctx, f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(cleanup)
	core, err := service.NewCore(service.CoreConfig{
		Store: st, PublicURL: "https://switchboard.test", Logger: discardLogger(),
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, Logger: discardLogger()})
			return []carriers.Carrier{c}, err
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	api, err := server.New(server.Config{Core: core, RateLimit: -1, Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = api.Close(ctx) })
	p, err := st.CreateProject(ctx, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	_, key, err := st.CreateAPIKey(ctx, p.ID, false)
	if err != nil {
		f.Fatal(err)
	}
	acct := &store.Account{ProjectID: p.ID, Name: "fuzz"}
	if err := st.CreateAccount(ctx, acct); err != nil {
		f.Fatal(err)
	}
	user := &store.User{ProjectID: p.ID, AccountID: acct.ID, FirstName: "F"}
	if err := st.CreateUser(ctx, user); err != nil {
		f.Fatal(err)
	}
	return &fuzzFixture{api: api, st: st, project: p.ID, key: key, account: acct, user: user}
}

// do sends a request with the fixture's key and checks what every answer must be: never a 5xx
// (501 is the honest answer of an operation not built yet) and every error in the envelope.
func (fx *fuzzFixture) do(t *testing.T, method, target string, body []byte) int {
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		t.Skip()
	}
	req.Header.Set("Authorization", "Bearer "+fx.key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	fx.api.ServeHTTP(rec, req)
	show := func() string {
		b := body
		if len(b) > 300 {
			b = append(b[:300:300], "…"...)
		}
		return fmt.Sprintf("%s %s %q: status %d: %.500s", method, target, b, rec.Code, rec.Body)
	}
	if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
		t.Fatal(show())
	}
	if rec.Code >= 400 && method != http.MethodHead {
		var env struct {
			Error struct{ Type, Message string } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error.Type == "" || env.Error.Message == "" {
			t.Fatalf("without the error envelope: %s", show())
		}
	}
	return rec.Code
}

// rows counts the fixture project's rows in the tables a request can write.
func (fx *fuzzFixture) rows(t *testing.T) int64 {
	var total int64
	for _, table := range projectTables {
		var n int64
		if err := fx.st.DB().Raw("SELECT count(*) FROM "+table+" WHERE project_id = ?", fx.project).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// FuzzRequests feeds arbitrary methods, paths, query strings and bodies to the whole handler
// stack with a valid key: whatever arrives, the answer is never a 500 (501 is the honest answer
// of operations not built yet) and every error is in the spec's envelope.
func FuzzRequests(f *testing.F) {
	fx := newFuzzFixture(f)
	acct, user := fx.account, fx.user

	seeds := []struct{ method, path, query, body string }{
		{"POST", "/accounts", "", `{"name":"Acme","organization":{"address":{"line1":"1 Main"}}}`},
		{"PATCH", "/accounts/{acct}", "", `{"time_zone":null,"brand_name":"B"}`},
		{"GET", "/accounts", "limit=3&after=djE6YWNjdF8", ""},
		{"GET", "/accounts/{acct}/status", "capabilities=local_messaging", ""},
		{"POST", "/accounts/{acct}/contacts", "", `{"phone_number":"+15555550100","metadata":{"a":"b"}}`},
		{"POST", "/accounts/{acct}/users", "", `{"first_name":"A","photo_url":"https://x.test/a.png"}`},
		{"POST", "/users/{usr}/tokens", "", `{"duration_seconds":15}`},
		{"POST", "/accounts/{acct}/messages", "", `{"to":"+15555550100","body":"hi"}`},
		{"GET", "/accounts/{acct}/users", "before=%ff%fe", ""},
		{"POST", "/accounts", "", `{"name":`},
		{"DELETE", "/accounts/{acct}", "", ""},
		{"GET", "/l/abcd", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path, query string, body []byte) {
		path = strings.NewReplacer("{acct}", acct.ID, "{usr}", user.ID).Replace(path)
		u := &url.URL{Scheme: "https", Host: "switchboard.test", Path: "/" + strings.TrimPrefix(path, "/"), RawQuery: query}
		if !validMethod(method) {
			method = http.MethodPost
		}
		fx.do(t, method, u.String(), body)
	})
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// hostileBodies are the operations FuzzHostileBodies writes to: a valid body, and the fields of
// it that take the fuzzed text.
var hostileBodies = []struct {
	method, path string
	body         string
	fields       []string
}{
	{"POST", "/accounts", `{"name":"Acme","brand_name":"Acme","time_zone":"America/Chicago","organization":{"registered_name":"Acme","address":{"line1":"1 Main St"},"contact":{"first_name":"Mia"}}}`,
		[]string{"name", "brand_name", "time_zone", "organization.registered_name", "organization.address.line1", "organization.contact.first_name"}},
	{"PATCH", "/accounts/{acct}", `{"name":"Acme","organization":{"identifier":"12-3456789"}}`, []string{"name", "organization.identifier"}},
	{"POST", "/accounts/{acct}/users", `{"first_name":"Mia","last_name":"Lee","metadata":{"team":"x"}}`, []string{"first_name", "last_name", "metadata.team"}},
	{"PATCH", "/users/{usr}", `{"first_name":"Mia","metadata":{"team":"x"}}`, []string{"first_name", "metadata.team"}},
	{"POST", "/accounts/{acct}/contacts", `{"phone_number":"+14155550100","first_name":"Mia","email":"mia@example.com","metadata":{"note":"x"}}`,
		[]string{"first_name", "email", "metadata.note", "phone_number"}},
	{"POST", "/accounts/{acct}/messages", `{"to":"+14155550100","body":"Hi","metadata":{"order":"1"},"attachments":[{"url":"https://example.com/a.png"}]}`,
		[]string{"body", "metadata.order", "attachments.0.url", "to"}},
	{"POST", "/accounts/{acct}/blasts", `{"name":"Spring","body":"Hi","to":["+14155550100"]}`, []string{"name", "body", "to.0"}},
	{"POST", "/accounts/{acct}/audiences", `{"name":"VIP"}`, []string{"name"}},
	{"POST", "/accounts/{acct}/campaigns", `{"use_cases":["account_notification","customer_care"],"description":"Reminders for customers.",` +
		`"message_samples":["Hi Mia, reply STOP to opt out.","Your car is ready."],"consent_flow":"A box on the form.",` +
		`"privacy_policy_url":"https://acme.test/privacy","volume":"low"}`, []string{"description", "message_samples.1", "consent_flow"}},
	{"POST", "/accounts/{acct}/verifications", `{"phone_number":"+14155550100"}`, []string{"phone_number"}},
}

// FuzzHostileBodies writes hostile text into the fields of valid JSON bodies: NUL characters,
// lone surrogates, bytes that are not UTF-8 (raw, as the bytes of the body), strings up to past
// 1 MiB, and values nested thousands deep. Whatever arrives, the answer is never a 5xx nor
// outside the envelope; text that cannot be stored is refused (a NUL: 422; bytes that are not
// UTF-8: 400) and a refused request stores nothing.
func FuzzHostileBodies(f *testing.F) {
	fx := newFuzzFixture(f)
	for i, op := range hostileBodies {
		for j := range op.fields {
			f.Add(uint8(i), uint8(j), "plain text", false, uint32(1), uint16(0))
		}
	}
	f.Add(uint8(0), uint8(0), "a\x00b", false, uint32(1), uint16(0))
	f.Add(uint8(2), uint8(2), "\x00", false, uint32(1), uint16(0))
	f.Add(uint8(0), uint8(0), `\ud800`, true, uint32(1), uint16(0))
	f.Add(uint8(5), uint8(0), `\udc00\ud800`, true, uint32(1), uint16(0))
	f.Add(uint8(4), uint8(1), `\ud83d\ude00`, true, uint32(1), uint16(0))
	f.Add(uint8(0), uint8(0), "\xff\xfe", true, uint32(1), uint16(0))
	f.Add(uint8(6), uint8(1), "\xed\xa0\x80", true, uint32(1), uint16(0))
	f.Add(uint8(1), uint8(0), "\xc0\xaf", true, uint32(1), uint16(0))
	f.Add(uint8(0), uint8(0), `\u0000`, true, uint32(1), uint16(0))
	f.Add(uint8(5), uint8(0), "0123456789abcdef", false, uint32(70000), uint16(0))
	f.Add(uint8(3), uint8(1), "deep", false, uint32(1), uint16(5000))
	f.Add(uint8(4), uint8(2), "x", false, uint32(1), uint16(100))
	f.Fuzz(func(t *testing.T, opIndex, fieldIndex uint8, text string, raw bool, repeat uint32, depth uint16) {
		op := hostileBodies[int(opIndex)%len(hostileBodies)]
		field := op.fields[int(fieldIndex)%len(op.fields)]
		if repeat > 1 && len(text) > 0 {
			text = strings.Repeat(text, int(min(repeat, uint32(1<<21/len(text)+1))))
		}
		body := hostileBody(t, op.body, field, text, raw, int(depth%10000))
		path := strings.NewReplacer("{acct}", fx.account.ID, "{usr}", fx.user.ID).Replace(op.path)
		before := fx.rows(t)
		status := fx.do(t, op.method, "https://switchboard.test"+path, body)
		if status >= 400 && fx.rows(t) != before {
			t.Fatalf("%s %s answered %d but stored rows", op.method, path, status)
		}
		switch {
		case status == http.StatusRequestEntityTooLarge:
		case raw && !utf8.Valid(body):
			if status != http.StatusBadRequest {
				t.Fatalf("a body that is not UTF-8 answered %d, not 400", status)
			}
		case !raw && strings.IndexByte(text, 0) >= 0:
			if status != http.StatusUnprocessableEntity {
				t.Fatalf("a NUL in %s answered %d, not 422", field, status)
			}
		case raw && json.Valid(body):
			// An escaped NUL (\u0000) is refused too; a lone surrogate next to it may be found first.
			var decoded string
			if json.Unmarshal([]byte(`"`+text+`"`), &decoded) == nil && strings.IndexByte(decoded, 0) >= 0 &&
				status != http.StatusUnprocessableEntity && status != http.StatusBadRequest {
				t.Fatalf("an escaped NUL in %s answered %d", field, status)
			}
		}
	})
}

// hostileBody returns the JSON body template with the string at the dotted field replaced by
// text (nested depth levels deep when depth > 0): JSON-encoded, or, when raw, put between the
// quotes as it is, so that its bytes and escapes reach the decoder unchanged.
func hostileBody(t *testing.T, template, field, text string, raw bool, depth int) []byte {
	var v map[string]any
	if err := json.Unmarshal([]byte(template), &v); err != nil {
		t.Fatal(err)
	}
	const mark = "\x01HOSTILE\x01"
	var value any = mark
	for i := range depth {
		if i%2 == 0 {
			value = []any{value}
		} else {
			value = map[string]any{"a": value}
		}
	}
	var at any = v
	keys := strings.Split(field, ".")
	for _, k := range keys[:len(keys)-1] {
		switch c := at.(type) {
		case map[string]any:
			at = c[k]
		case []any:
			i, _ := strconv.Atoi(k)
			at = c[i]
		}
	}
	last := keys[len(keys)-1]
	switch c := at.(type) {
	case map[string]any:
		c[last] = value
	case []any:
		i, _ := strconv.Atoi(last)
		c[i] = value
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(mark)
	replacement, _ := json.Marshal(text)
	if raw {
		replacement = append(append([]byte{'"'}, text...), '"')
	}
	return bytes.Replace(b, quoted, replacement, 1)
}
