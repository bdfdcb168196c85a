package webhooks

import (
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchboard/switchboard/store"
)

// The data of message.* events is written by hand rather than by json.Marshal, whose reflection
// over a message, its conversation, contact and number was about 1.1 µs an event, three events a
// message (json.Marshal was 3.2% of the server's CPU in an e2e run). The bytes are json.Marshal's,
// byte for byte (a spec compares them, HTML escapes and invalid UTF-8 included); a time that
// json.Marshal refuses makes AppendJSON give up, and store.NewEvent then marshals the data.

// AppendJSON appends d as json.Marshal writes it; ok is false when json.Marshal would fail (a time
// outside RFC 3339's years).
func (d MessageData) AppendJSON(b []byte) (_ []byte, ok bool) {
	ok = true
	b = append(b, `{"id":`...)
	b = appendJSONString(b, d.ID)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, d.Status)
	b = append(b, `,"direction":`...)
	b = appendJSONString(b, d.Direction)
	b = append(b, `,"body":`...)
	b = appendJSONOptString(b, d.Body)
	b = append(b, `,"attachments":`...)
	if d.Attachments == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range d.Attachments {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, a.ID)
			b = append(b, `,"type":`...)
			b = appendJSONString(b, a.Type)
			b = append(b, `,"url":`...)
			b = appendJSONString(b, a.URL)
			b = append(b, `,"status":`...)
			b = appendJSONString(b, a.Status)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if d.BlastID != nil {
		b = append(b, `,"blast_id":`...)
		b = appendJSONString(b, *d.BlastID)
	}
	c := &d.Conversation
	b = append(b, `,"conversation":{"id":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"contact":{"id":`...)
	b = appendJSONString(b, c.Contact.ID)
	b = append(b, `,"phone_number":`...)
	b = appendJSONString(b, c.Contact.PhoneNumber)
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`,"email":`, c.Contact.Email}, {`,"first_name":`, c.Contact.FirstName}, {`,"last_name":`, c.Contact.LastName}} {
		if f.v != nil {
			b = append(b, f.name...)
			b = appendJSONString(b, *f.v)
		}
	}
	b = append(b, `,"metadata":`...)
	b = appendJSONMetadata(b, c.Contact.Metadata)
	b = append(b, `,"outbound_disabled":`...)
	b = strconv.AppendBool(b, c.Contact.OutboundDisabled)
	b = append(b, `,"opted_out":`...)
	b = strconv.AppendBool(b, c.Contact.OptedOut)
	b = append(b, `,"created_at":`...)
	b, ok = appendJSONTime(b, c.Contact.CreatedAt, ok)
	b = append(b, `},"phone_number":{"id":`...)
	b = appendJSONString(b, c.PhoneNumber.ID)
	b = append(b, `,"metadata":`...)
	b = appendJSONMetadata(b, c.PhoneNumber.Metadata)
	b = append(b, `,"name":`...)
	b = appendJSONOptString(b, c.PhoneNumber.Name)
	b = append(b, `,"number":`...)
	b = appendJSONString(b, c.PhoneNumber.Number)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, c.PhoneNumber.Type)
	b = append(b, `}},"metadata":`...)
	b = appendJSONMetadata(b, d.Metadata)
	b = append(b, `,"encoding":`...)
	b = appendJSONString(b, d.Encoding)
	b = append(b, `,"segments":`...)
	b = strconv.AppendInt(b, int64(d.Segments), 10)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, d.Type)
	b = append(b, `,"created_at":`...)
	b, ok = appendJSONTime(b, d.CreatedAt, ok)
	for _, f := range [...]struct {
		name string
		v    *time.Time
	}{{`,"send_at":`, d.SendAt}, {`,"sent_at":`, d.SentAt}, {`,"delivered_at":`, d.DeliveredAt},
		{`,"failed_at":`, d.FailedAt}, {`,"received_at":`, d.ReceivedAt}} {
		if f.v != nil {
			b = append(b, f.name...)
			b, ok = appendJSONTime(b, *f.v, ok)
		}
	}
	if d.FailureReason != nil {
		b = append(b, `,"failure_reason":`...)
		b = appendJSONString(b, *d.FailureReason)
	}
	return append(b, '}'), ok
}

// appendJSONOptString appends *s as a JSON string, null when s is nil.
func appendJSONOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONMetadata appends m as json.Marshal writes a map of strings: null when nil, its keys
// in sorted order.
func appendJSONMetadata(b []byte, m store.Metadata) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	var fixed [16]string
	keys := fixed[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// appendJSONTime appends t as time.Time's MarshalJSON writes it (RFC 3339 with nanoseconds); ok
// turns false for a time that MarshalJSON refuses (a year outside 0–9999, an offset of a day or
// more).
func appendJSONTime(b []byte, t time.Time, ok bool) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off <= -24*60*60 || off >= 24*60*60 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), ok
}

// jsonHex is encoding/json's hex digits.
const jsonHex = "0123456789abcdef"

// appendJSONString appends s as a JSON string as json.Marshal writes it: HTML's <, > and & and
// control characters as \u escapes (\b, \f, \n, \r and \t as such), invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
