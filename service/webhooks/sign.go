package webhooks

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/store"
)

// envelope is the body of every delivery: exactly the spec's four fields.
type envelope struct {
	AccountID string          `json:"account_id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Body returns the JSON body delivered for an event: json.Marshal of its envelope, byte for
// byte. Every delivery builds one, so the common case (ids and a type of plain ASCII, a timestamp
// in years 0–9999, data without the characters json.Marshal escapes for HTML) is appended
// directly, without reflection; anything else goes through json.Marshal.
func Body(e *store.Event) ([]byte, error) {
	env := envelope{AccountID: e.AccountID, Type: e.Type, Timestamp: e.CreatedAt.UTC(), Data: json.RawMessage(e.Data)}
	if y := env.Timestamp.Year(); y < 0 || y > 9999 || !plainJSONString(env.AccountID) || !plainJSONString(env.Type) {
		return json.Marshal(env)
	}
	b := make([]byte, 0, len(e.Data)+len(env.AccountID)+len(env.Type)+80)
	b = append(b, `{"account_id":"`...)
	b = append(b, env.AccountID...)
	b = append(b, `","type":"`...)
	b = append(b, env.Type...)
	b = append(b, `","timestamp":"`...)
	b = env.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	data := len(b)
	buf := bytes.NewBuffer(b)
	// json.Marshal compacts a RawMessage and escapes <, >, &, U+2028 and U+2029 in it.
	if err := json.Compact(buf, env.Data); err != nil || htmlEscaped(buf.Bytes()[data:]) {
		return json.Marshal(env)
	}
	return append(buf.Bytes(), '}'), nil
}

// htmlEscaped reports whether json.Marshal would escape something in b for HTML: <, >, &, U+2028
// or U+2029 (E2 80 A8 and E2 80 A9 in UTF-8).
func htmlEscaped(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '<' || c == '>' || c == '&':
			return true
		case c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xa8:
			return true
		}
	}
	return false
}

// plainJSONString reports whether json.Marshal writes s as itself between quotes: printable
// ASCII without the characters it escapes (quote, backslash, and <, > and & for HTML).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// NewSecret returns a fresh signing secret: whsec_ and the base64 of 24 random bytes.
func NewSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhooks: secret: %w", err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// Sign returns the webhook-signature header (Standard Webhooks: "v1,<base64 HMAC-SHA256
// of {id}.{unix ts}.{body}>" per secret, space-separated) and the deprecated svc-signature
// header ("t=<unix ts>,v1=<hex HMAC-SHA256 of {ts}.{body}>", one v1 per secret), signing with
// each whsec_ secret in order.
func Sign(secrets []string, id string, at time.Time, body []byte) (webhookSignature, svcSignature string, err error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	std := make([]string, 0, len(secrets))
	svc := []string{"t=" + ts}
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			return "", "", fmt.Errorf("webhooks: secret is not whsec_ and base64: %w", err)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		std = append(std, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		m = hmac.New(sha256.New, key)
		m.Write([]byte(ts + "."))
		m.Write(body)
		svc = append(svc, "v1="+hex.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(std, " "), strings.Join(svc, ","), nil
}
