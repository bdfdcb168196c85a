package server

import (
	"encoding/json"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting that decodeJSONValue reads; a deeper body takes the slow way
// (encoding/json refuses beyond 10,000).
const maxJSONDepth = 1000

// decodeJSONValue decodes data as encoding/json decodes a JSON text into an any with UseNumber
// (objects as map[string]any, the last of equal keys winning; arrays as []any, never nil;
// numbers as json.Number), in one pass and without its scanner's step function per byte. ok is
// false for anything but a JSON text in valid UTF-8 without \u escapes of lone surrogates,
// nested at most maxJSONDepth deep, with nothing but white space after its value: strictJSONBody
// then decodes it the slow way, which says what is wrong (or, for a depth beyond maxJSONDepth,
// decodes it).
func decodeJSONValue(data []byte) (v any, ok bool) {
	d := jsonValueDecoder{data: data}
	d.space()
	if v, ok = d.value(0); !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.data)
}

// jsonValueDecoder is decodeJSONValue's reader: data, read up to i.
type jsonValueDecoder struct {
	data []byte
	i    int
}

// space skips JSON's white space.
func (d *jsonValueDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value reads the value at i, at depth levels of nesting.
func (d *jsonValueDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		if s, ok := d.string(); ok {
			return s, true
		}
		return nil, false
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

// literal reads word (true, false, null) at i.
func (d *jsonValueDecoder) literal(word string) bool {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

func (d *jsonValueDecoder) object(depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		d.space()
		if d.i >= len(d.data) {
			return nil, false
		}
		switch d.data[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *jsonValueDecoder) array(depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	d.i++ // [
	a := make([]any, 0)
	d.space()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.data) {
			return nil, false
		}
		switch d.data[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// number reads a number as JSON writes one: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *jsonValueDecoder) number() (any, bool) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.data) && d.data[d.i] == '0':
		d.i++
	case digits() == 0:
		return nil, false
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return json.Number(d.data[start:d.i]), true
}

// string reads a string at i (its opening quote).
func (d *jsonValueDecoder) string() (string, bool) {
	d.i++ // "
	start := d.i
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			s := string(d.data[start:d.i])
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			d.i++
		default:
			r, size := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			d.i += size
		}
	}
	return "", false
}

// escaped reads the rest of a string that started at start and has an escape at i.
func (d *jsonValueDecoder) escaped(start int) (string, bool) {
	b := make([]byte, d.i-start, d.i-start+16)
	copy(b, d.data[start:d.i])
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return string(b), true
		case c == '\\':
			if d.i+1 >= len(d.data) {
				return "", false
			}
			e := d.data[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := d.hex4()
				switch {
				case r < 0, r >= 0xdc00 && r <= 0xdfff:
					return "", false
				case r >= 0xd800 && r <= 0xdbff:
					if d.i+1 >= len(d.data) || d.data[d.i] != '\\' || d.data[d.i+1] != 'u' {
						return "", false
					}
					d.i += 2
					low := d.hex4()
					if low < 0xdc00 || low > 0xdfff {
						return "", false
					}
					r = 0x10000 + (r-0xd800)<<10 + (low - 0xdc00)
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", false
			}
		case c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			b = append(b, d.data[d.i:d.i+size]...)
			d.i += size
		}
	}
	return "", false
}

// hex4 reads the four hexadecimal digits of a \u escape at i; -1 when they are not.
func (d *jsonValueDecoder) hex4() rune {
	if len(d.data)-d.i < 4 {
		return -1
	}
	var r rune
	for _, c := range d.data[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r
}
