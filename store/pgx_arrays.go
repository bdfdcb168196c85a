package store

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The hot paths pass their batches to unnest as Go slices ([]string, []*string, []time.Time,
// []*time.Time). pgx encodes such a slice through its generic array codec, which boxes every
// element in an interface (and a time twice), one allocation each: about a hundred per message
// over a message's statements. fastArrayCodec writes the same binary array directly for the text,
// varchar and timestamptz arrays (the element types of every unnest of the hot paths), byte for
// byte as pgx does (a spec compares both); every other value and format goes to pgx's codec.

// registerFastArrays installs fastArrayCodec on a new connection's type map (stdlib's
// AfterConnect).
func registerFastArrays(_ context.Context, c *pgx.Conn) error {
	useFastArrays(c.TypeMap())
	return nil
}

// useFastArrays registers fastArrayCodec for the text, varchar and timestamptz arrays of m, and
// scans optional text and times (a *string or *time.Time field) without reflection
// (tryOptionalScanPlan).
func useFastArrays(m *pgtype.Map) {
	m.TryWrapScanPlanFuncs = append([]pgtype.TryWrapScanPlanFunc{tryOptionalScanPlan}, m.TryWrapScanPlanFuncs...)
	for _, t := range []struct {
		name      string
		oid, elem uint32
	}{
		{"_text", pgtype.TextArrayOID, pgtype.TextOID},
		{"_varchar", pgtype.VarcharArrayOID, pgtype.VarcharOID},
		{"_timestamptz", pgtype.TimestamptzArrayOID, pgtype.TimestamptzOID},
	} {
		elem, ok := m.TypeForOID(t.elem)
		if !ok {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.name, OID: t.oid,
			Codec: &fastArrayCodec{ArrayCodec: pgtype.ArrayCodec{ElementType: elem}}})
	}
}

// fastArrayCodec is pgx's ArrayCodec with a direct binary encoding of []string and []*string
// (text and varchar arrays) and []time.Time and []*time.Time (timestamptz arrays).
type fastArrayCodec struct {
	pgtype.ArrayCodec
}

// PlanEncode takes the slices it writes itself and leaves the rest to pgx's ArrayCodec.
func (c *fastArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		elem := c.ElementType.OID
		switch value.(type) {
		case []string, []*string:
			if elem == pgtype.TextOID || elem == pgtype.VarcharOID {
				return fastArrayPlan{elem: elem}
			}
		case []time.Time, []*time.Time:
			if elem == pgtype.TimestamptzOID {
				return fastArrayPlan{elem: elem}
			}
		}
	}
	return c.ArrayCodec.PlanEncode(m, oid, format, value)
}

// fastArrayPlan writes a one-dimensional binary array (lower bound 1) of elem; a nil slice is
// NULL, as pgx writes it.
type fastArrayPlan struct{ elem uint32 }

// microsY2K is 2000-01-01 UTC in microseconds since the Unix epoch, PostgreSQL's epoch.
const microsY2K = 946_684_800 * 1_000_000

func (p fastArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	n, isNil := 0, false
	switch v := value.(type) {
	case []string:
		n, isNil = len(v), v == nil
	case []*string:
		n, isNil = len(v), v == nil
	case []time.Time:
		n, isNil = len(v), v == nil
	case []*time.Time:
		n, isNil = len(v), v == nil
	}
	if isNil {
		return nil, nil
	}
	buf = reserve(buf, arraySize(value, n))
	// Header: dimensions, has-nulls flag (set below), element type, then length and lower bound.
	nullsAt := len(buf) + 4
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, p.elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	null := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[nullsAt:], 1)
		return binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
	}
	switch v := value.(type) {
	case []string:
		for _, s := range v {
			buf = appendText(buf, s)
		}
	case []*string:
		for _, s := range v {
			if s == nil {
				buf = null(buf)
			} else {
				buf = appendText(buf, *s)
			}
		}
	case []time.Time:
		for _, t := range v {
			buf = appendTimestamptz(buf, t)
		}
	case []*time.Time:
		for _, t := range v {
			if t == nil {
				buf = null(buf)
			} else {
				buf = appendTimestamptz(buf, *t)
			}
		}
	}
	return buf, nil
}

// arraySize is the length of the binary array fastArrayPlan writes for value, a slice of n
// elements: its 20-byte header and each element's length and bytes (a timestamptz is 8 bytes, a
// NULL none).
func arraySize(value any, n int) int {
	size := 20 + 4*n
	switch v := value.(type) {
	case []string:
		for _, s := range v {
			size += len(s)
		}
	case []*string:
		for _, s := range v {
			if s != nil {
				size += len(*s)
			}
		}
	case []time.Time:
		size += 8 * n
	case []*time.Time:
		for _, t := range v {
			if t != nil {
				size += 8
			}
		}
	}
	return size
}

// reserve returns buf with room for n more bytes, at least doubling its capacity when it grows.
// pgx encodes a statement's arguments one after the other into one buffer that starts at 256
// bytes for each statement; appended element by element, a batch's arrays grew it by a quarter
// at a time, each step a copy of all of it (a fifth of the server's allocated bytes in an e2e
// run).
func reserve(buf []byte, n int) []byte {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	grown := make([]byte, len(buf), max(2*cap(buf), len(buf)+n))
	copy(grown, buf)
	return grown
}

// appendText appends one text element: its length and its bytes.
func appendText(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}

// appendTimestamptz appends one timestamptz element: 8 bytes of microseconds since 2000-01-01
// UTC, truncated as pgx truncates them.
func appendTimestamptz(buf []byte, t time.Time) []byte {
	buf = binary.BigEndian.AppendUint32(buf, 8)
	micros := t.Unix()*1_000_000 + int64(t.Nanosecond())/1000
	return binary.BigEndian.AppendUint64(buf, uint64(micros-microsY2K))
}

// The hot paths scan optional columns (a message's carrier id, its sent and delivered times …)
// into *string and *time.Time fields. pgx scans into such a pointer to a pointer through
// reflection (reflect.New and reflect.Value.Set for each value); optionalScanPlan does the same
// for these two types directly: NULL is nil, a value is scanned into a new one.

// tryOptionalScanPlan is a pgtype.TryWrapScanPlanFunc for **string and **time.Time targets.
func tryOptionalScanPlan(target any) (pgtype.WrappedScanPlanNextSetter, any, bool) {
	switch target.(type) {
	case **string:
		return &optionalScanPlan[string]{}, (*string)(nil), true
	case **time.Time:
		return &optionalScanPlan[time.Time]{}, (*time.Time)(nil), true
	}
	return nil, nil, false
}

// optionalScanPlan scans into a **T: nil for NULL, otherwise a new T scanned by next.
type optionalScanPlan[T any] struct{ next pgtype.ScanPlan }

func (p *optionalScanPlan[T]) SetNext(next pgtype.ScanPlan) { p.next = next }

func (p *optionalScanPlan[T]) Scan(src []byte, dst any) error {
	d := dst.(**T)
	if src == nil {
		*d = nil
		return nil
	}
	*d = new(T)
	return p.next.Scan(src, *d)
}
