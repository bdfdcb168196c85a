package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// consoleSeq makes the suite's console users and client addresses unique.
var consoleSeq atomic.Int64

// consolePassword is the password of the console users the specs create.
const consolePassword = "correct horse battery staple"

// newConsoleUser creates a console user with consolePassword and, when projectID is not empty,
// a role on that project; it returns the user's email.
func newConsoleUser(projectID, role string) string {
	ctx := context.Background()
	n := consoleSeq.Add(1)
	email := fmt.Sprintf("operator%d-%d@example.com", n, time.Now().UnixNano()%1000000)
	hash, err := service.HashPassword(consolePassword)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	now := time.Now().UTC()
	u := &store.ConsoleUser{ID: store.NewID(store.PrefixConsoleUser), Email: email, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	ExpectWithOffset(1, st.CreateConsoleUser(ctx, u)).To(Succeed())
	if projectID != "" {
		ExpectWithOffset(1, st.SetMember(ctx, &store.ConsoleMember{ProjectID: projectID, UserID: u.ID, Role: role, CreatedAt: now})).To(Succeed())
	}
	return email
}

// consoleClient is a browser of the console: its session cookie, the CSRF token the pages read
// from the API, and its own client address.
type consoleClient struct {
	api    *server.Server
	ip     string
	cookie string
	csrf   string
	me     map[string]any
}

// newConsoleClient is a browser that has not signed in, from an address of its own.
func newConsoleClient() *consoleClient {
	n := consoleSeq.Add(1)
	return &consoleClient{api: api, ip: fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)}
}

// signIn signs a new browser in as email and expects success.
func signIn(email string) *consoleClient {
	c := newConsoleClient()
	r := c.login(email, consolePassword, "")
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK))
	return c
}

// login posts the sign-in form; on success the client keeps the cookie and CSRF token.
func (c *consoleClient) login(email, password, code string) *response {
	body := map[string]any{"email": email, "password": password}
	if code != "" {
		body["totp_code"] = code
	}
	r := c.do(http.MethodPost, "/login", body)
	if r.Status == http.StatusOK {
		for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
			if ck.Name == server.SessionCookie {
				c.cookie = ck.Value
			}
		}
		c.me = r.JSON()
		c.csrf, _ = c.me["csrf_token"].(string)
	}
	return r
}

// do sends a request to the console API (path relative to /console/api) the way the console's
// pages do: same origin, the session cookie, JSON, and the CSRF token on changes. headers are
// name, value pairs that override (an empty value removes the header).
func (c *consoleClient) do(method, path string, body any, headers ...string) *response {
	rd := requestBody(body)
	req := httptest.NewRequest(method, "https://switchboard.test"+server.ConsoleAPIPath+path, rd)
	req.RemoteAddr = c.ip + ":51234"
	req.Header.Set("User-Agent", "console-spec/1.0")
	req.Header.Set("Origin", "https://switchboard.test")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cookie != "" {
		req.AddCookie(&http.Cookie{Name: server.SessionCookie, Value: c.cookie})
	}
	if c.csrf != "" && method != http.MethodGet {
		req.Header.Set(server.CSRFHeader, c.csrf)
	}
	setHeaders(req, headers)
	rec := httptest.NewRecorder()
	c.api.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

func (c *consoleClient) get(path string, headers ...string) *response {
	return c.do(http.MethodGet, path, nil, headers...)
}

func (c *consoleClient) post(path string, body any, headers ...string) *response {
	if body == nil {
		body = map[string]any{}
	}
	return c.do(http.MethodPost, path, body, headers...)
}

// auditActions lists the actions of a project's audit log, newest first.
func auditActions(projectID string) []string {
	es, _, err := st.ListAudit(context.Background(), projectID, store.Page{Limit: 100})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Action
	}
	return out
}

// lastAudit is a project's most recent audit entry.
func lastAudit(projectID string) store.AuditEntry {
	es, _, err := st.ListAudit(context.Background(), projectID, store.Page{Limit: 1})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, es).To(HaveLen(1))
	return es[0]
}
