package kit

import (
	"slices"
	"time"
	"unicode/utf8"
)

// The hot paths write a few JSON documents by hand (a message as the API answers it and as its
// events carry it), byte for byte as encoding/json's Marshal writes them, without its reflection.
// These are the pieces: a string, a time and a map of strings, each as json.Marshal writes it.

// jsonHex is encoding/json's hex digits.
const jsonHex = "0123456789abcdef"

// AppendJSONString appends s as a JSON string as json.Marshal writes it: HTML's <, > and & and
// control characters as \u escapes (\b, \f, \n, \r and \t as such), invalid UTF-8 as \ufffd,
// and U+2028 and U+2029 escaped.
func AppendJSONString(b []byte, s string) []byte {
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

// AppendJSONOptString appends *s as a JSON string, null when s is nil.
func AppendJSONOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendJSONString(b, *s)
}

// AppendJSONTime appends t as time.Time's MarshalJSON writes it (RFC 3339 with nanoseconds) and
// returns ok, carried: false, having appended nothing, for a time that MarshalJSON refuses (a
// year outside 0–9999 or an offset of a day or more), so that a document of several times, written
// with ok passed from one to the next, is known to be whole or to be dropped.
func AppendJSONTime(b []byte, t time.Time, ok bool) ([]byte, bool) {
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

// AppendJSONStringMap appends m as json.Marshal writes a map of strings: null when nil, the keys
// in sorted order.
func AppendJSONStringMap[M ~map[string]string](b []byte, m M) []byte {
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
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = AppendJSONString(b, m[k])
	}
	return append(b, '}')
}
