package twilio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// apiVersion prefixes every REST path.
const apiVersion = "/2010-04-01"

// client is the part of Twilio's REST APIs that the adapter uses (the 2010-04-01 API, Messaging
// v1 and TrustHub v1, each on a host of its own): form-encoded requests with HTTP basic auth
// (AccountSid:AuthToken), JSON answers.
type client struct {
	// base, messaging and trusthub are the APIs' bases.
	base, messaging, trusthub string
	sid, token                string
	http                      *http.Client
}

// apiError is an error answer of the REST API: {"code": 21211, "message": "…", "status": 400}.
type apiError struct {
	Status  int    `json:"status"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("twilio: HTTP %d, error %d: %s", e.Status, e.Code, e.Message)
}

// accountPath is the path of a resource of the account, such as "/Messages.json".
func (cl *client) accountPath(resource string) string {
	return apiVersion + "/Accounts/" + url.PathEscape(cl.sid) + resource
}

// do sends a request to path of the 2010-04-01 API; see at.
func (cl *client) do(ctx context.Context, method, path string, query, form url.Values, out any) error {
	return cl.at(ctx, cl.base, method, path, query, form, out)
}

// at sends a request to path under base (with query for GET and DELETE, form for POST) and
// decodes a 2xx JSON answer into out (when not nil). Other answers are *apiError.
func (cl *client) at(ctx context.Context, base, method, path string, query, form url.Values, out any) error {
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("twilio: %s %s: %w", method, path, err)
	}
	req.SetBasicAuth(cl.sid, cl.token)
	req.Header.Set("Accept", "application/json")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return fmt.Errorf("twilio: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("twilio: %s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data[:min(len(data), 200)]))
		}
		e.Status = resp.StatusCode
		return e
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("twilio: %s %s: decode answer: %w", method, path, err)
	}
	return nil
}
