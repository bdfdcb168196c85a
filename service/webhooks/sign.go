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
	"hash"
	"strconv"
	"strings"
	"sync"
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

// Body returns the JSON body delivered for an event: json.Marshal of its envelope, byte for byte.
// Every attempt builds one, so the common case (ids and a type of plain ASCII, a timestamp in years
// 0–9999, data already as json.Marshal writes it: compact, without the characters it escapes for
// HTML) is appended directly, without reflection and without compacting the data again (the
// store's events are written by json.Marshal); other data is compacted, and anything else goes
// through json.Marshal.
func Body(e *store.Event) ([]byte, error) {
	at := e.CreatedAt.UTC()
	if y := at.Year(); y < 0 || y > 9999 || !plainJSONString(e.AccountID) || !plainJSONString(e.Type) {
		return marshalEnvelope(e, at)
	}
	b := make([]byte, 0, len(e.Data)+len(e.AccountID)+len(e.Type)+80)
	b = append(b, `{"account_id":"`...)
	b = append(b, e.AccountID...)
	b = append(b, `","type":"`...)
	b = append(b, e.Type...)
	b = append(b, `","timestamp":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	if canonicalJSON(e.Data) {
		b = append(b, e.Data...)
		return append(b, '}'), nil
	}
	data := len(b)
	buf := bytes.NewBuffer(b)
	// json.Marshal compacts a RawMessage and escapes <, >, &, U+2028 and U+2029 in it.
	if err := json.Compact(buf, []byte(e.Data)); err != nil || htmlEscaped(buf.Bytes()[data:]) {
		return marshalEnvelope(e, at)
	}
	return append(buf.Bytes(), '}'), nil
}

// marshalEnvelope is Body by json.Marshal, for what its appends do not cover. The data is copied
// into its RawMessage here only: the appends take it as the string it is.
func marshalEnvelope(e *store.Event, at time.Time) ([]byte, error) {
	return json.Marshal(envelope{AccountID: e.AccountID, Type: e.Type, Timestamp: at, Data: json.RawMessage(e.Data)})
}

// canonicalJSON reports whether s is one JSON value exactly as json.Marshal writes a RawMessage
// holding it: valid, compact (no whitespace outside strings), with none of the characters it
// escapes for HTML (<, >, &, U+2028, U+2029). It may answer false for such a value (nested deeper
// than it follows), never true for another.
func canonicalJSON(s string) bool {
	i, ok := canonicalValue(s, 0, 0)
	return ok && i == len(s)
}

// canonicalMaxDepth is how deep canonicalJSON follows nested objects and arrays.
const canonicalMaxDepth = 64

// canonicalValue checks the value that starts at s[i] and returns the index after it.
func canonicalValue(s string, i, depth int) (int, bool) {
	if i >= len(s) || depth > canonicalMaxDepth {
		return i, false
	}
	switch c := s[i]; {
	case c == '{':
		i++
		if i < len(s) && s[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(s) || s[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = canonicalString(s, i); !ok || i >= len(s) || s[i] != ':' {
				return i, false
			}
			if i, ok = canonicalValue(s, i+1, depth+1); !ok || i >= len(s) {
				return i, false
			}
			switch s[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		i++
		if i < len(s) && s[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = canonicalValue(s, i, depth+1); !ok || i >= len(s) {
				return i, false
			}
			switch s[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return canonicalString(s, i)
	case c == '-' || c >= '0' && c <= '9':
		return canonicalNumber(s, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(s[i:], lit) {
			return i + len(lit), true
		}
	}
	return i, false
}

// canonicalString checks the string that starts at s[i] (a quote) and returns the index after it.
func canonicalString(s string, i int) (int, bool) {
	for i++; i < len(s); i++ {
		c := s[i]
		if !stringSpecial[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			return i, false
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xa8:
			return i, false
		case c == '\\':
			i++
			if i >= len(s) {
				return i, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) {
					return i, false
				}
				for _, h := range []byte(s[i+1 : i+5]) {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// stringSpecial marks the bytes canonicalString looks at inside a string (the rest it passes in
// its fast path): the quote and the backslash, control characters, the characters json.Marshal
// escapes for HTML, and the first byte of U+2028 and U+2029.
var stringSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for _, c := range []byte{'"', '\\', '<', '>', '&', 0xe2} {
		t[c] = true
	}
	return t
}()

// canonicalNumber checks the number that starts at s[i] and returns the index after it.
func canonicalNumber(s string, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
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
	// scratch holds the prefix "{id}.{ts}." (its tail from ts on prefixes the svc-signature's
	// message) and each MAC; out holds both headers, which become one string sliced in two.
	scratch := make([]byte, 0, len(id)+22+2*sha256.Size)
	scratch = append(append(scratch, id...), '.')
	tsAt := len(scratch)
	scratch = append(strconv.AppendInt(scratch, at.Unix(), 10), '.')
	prefix := scratch[:len(scratch):len(scratch)]
	ts := prefix[tsAt : len(prefix)-1]
	sum := scratch[len(prefix):len(prefix)]
	// Each secret's HMAC state is taken from its pool once and makes both of its MACs; the
	// svc-signature's are kept in scratch until the webhook-signature's are written (one secret:
	// no slice for them).
	svcSums := sum[sha256.Size:sha256.Size]
	var svcMore [][]byte
	out := make([]byte, 0, len(secrets)*(48+69)+len(ts)+2)
	for i, s := range secrets {
		pool, err := signers.get(s)
		if err != nil {
			return "", "", err
		}
		m := pool.Get().(hash.Hash)
		m.Reset()
		m.Write(prefix)
		m.Write(body)
		if i > 0 {
			out = append(out, ' ')
		}
		out = base64.StdEncoding.AppendEncode(append(out, "v1,"...), m.Sum(sum[:0]))
		m.Reset()
		m.Write(prefix[tsAt:])
		m.Write(body)
		if i == 0 {
			svcSums = m.Sum(svcSums[:0])
		} else {
			svcMore = append(svcMore, m.Sum(nil))
		}
		pool.Put(m)
	}
	std := len(out)
	out = append(append(out, "t="...), ts...)
	out = hex.AppendEncode(append(out, ",v1="...), svcSums)
	for _, mac := range svcMore {
		out = hex.AppendEncode(append(out, ",v1="...), mac)
	}
	both := string(out)
	return both[:std], both[std:], nil
}

// signers keeps, per signing secret, a pool of HMAC-SHA256 states keyed with it, so that an
// attempt resets one rather than decoding the secret and keying a new one; each state is used by
// one attempt at a time.
var signers = signerCache{pools: map[string]*sync.Pool{}}

// signerCacheSize bounds the secrets signers keeps; past it, it starts again empty (rotated
// secrets are not kept for ever).
const signerCacheSize = 4096

type signerCache struct {
	mu    sync.RWMutex
	pools map[string]*sync.Pool
}

// get returns the pool of HMAC states of a whsec_ secret.
func (c *signerCache) get(secret string) (*sync.Pool, error) {
	c.mu.RLock()
	p := c.pools[secret]
	c.mu.RUnlock()
	if p != nil {
		return p, nil
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return nil, fmt.Errorf("webhooks: secret is not whsec_ and base64: %w", err)
	}
	p = &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.pools[secret]; q != nil {
		return q, nil
	}
	if len(c.pools) >= signerCacheSize {
		c.pools = map[string]*sync.Pool{}
	}
	c.pools[secret] = p
	return p, nil
}
