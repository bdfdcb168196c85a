package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// FuzzRequests feeds arbitrary methods, paths, query strings and bodies to the whole handler
// stack with a valid key: whatever arrives, the answer is never a 500 (501 is the honest answer
// of operations not built yet) and every error is in the spec's envelope.
func FuzzRequests(f *testing.F) {
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
	p, _ := st.CreateProject(ctx, "fuzz")
	_, key, _ := st.CreateAPIKey(ctx, p.ID, false)
	acct := &store.Account{ProjectID: p.ID, Name: "fuzz"}
	if err := st.CreateAccount(ctx, acct); err != nil {
		f.Fatal(err)
	}
	user := &store.User{ProjectID: p.ID, AccountID: acct.ID, FirstName: "F"}
	if err := st.CreateUser(ctx, user); err != nil {
		f.Fatal(err)
	}

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
		req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("%s %s?%s %q: status %d: %s", method, u.Path, query, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && method != http.MethodHead {
			var env struct {
				Error struct{ Type, Message string } `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error.Type == "" || env.Error.Message == "" {
				t.Fatalf("%s %s: status %d without the error envelope: %s", method, u.Path, rec.Code, rec.Body)
			}
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}
