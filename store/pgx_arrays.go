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
// (tryOptionalScanPlan). The three codecs share one argScratch: m is one connection's, and a
// statement's arrays of every type go to one buffer.
func useFastArrays(m *pgtype.Map) {
	scratch := &argScratch{}
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
			Codec: &fastArrayCodec{ArrayCodec: pgtype.ArrayCodec{ElementType: elem}, scratch: scratch}})
	}
}

// fastArrayCodec is pgx's ArrayCodec with a direct binary encoding of []string and []*string
// (text and varchar arrays) and []time.Time and []*time.Time (timestamptz arrays).
type fastArrayCodec struct {
	pgtype.ArrayCodec
	scratch *argScratch
}

// PlanEncode takes the slices it writes itself and leaves the rest to pgx's ArrayCodec.
func (c *fastArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		elem := c.ElementType.OID
		switch value.(type) {
		case []string, []*string:
			if elem == pgtype.TextOID || elem == pgtype.VarcharOID {
				return fastArrayPlan{elem: elem, scratch: c.scratch}
			}
		case []time.Time, []*time.Time:
			if elem == pgtype.TimestamptzOID {
				return fastArrayPlan{elem: elem, scratch: c.scratch}
			}
		}
	}
	return c.ArrayCodec.PlanEncode(m, oid, format, value)
}

// fastArrayPlan writes a one-dimensional binary array (lower bound 1) of elem; a nil slice is
// NULL, as pgx writes it.
type fastArrayPlan struct {
	elem    uint32
	scratch *argScratch
}

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
	buf = p.scratch.reserve(buf, arraySize(value, n))
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

// argScratch is the buffer of a connection's statement arguments that fastArrayPlan keeps from
// one statement to the next. pgx encodes a statement's arguments one after the other into one
// buffer (pgx.ExtendedQueryBuilder's), which it drops after each statement whose arguments
// outgrew 256 bytes, so that each statement of a batch made its buffer again, growing it array
// after array (a sixth of the server's allocated bytes in an e2e run, after Bind's). pgx sends a
// statement's arguments (copies them into its Bind message) before it builds the next one's, so
// the buffer of one statement is free when the next starts.
type argScratch struct {
	// buf is the buffer last handed out, of a capacity over pgxFreshArgs, or nil.
	buf []byte
}

const (
	// pgxFreshArgs is the capacity of the argument buffer that pgx starts each statement with
	// (128 for a connection's first, 256 after one that outgrew it, the same buffer after one that
	// did not). A buffer of at most this capacity is not argScratch's nor grown from it: no
	// argument of the statement under way is in argScratch's buffer, which can be handed out.
	pgxFreshArgs = 256
	// minArgScratch is the smallest buffer argScratch hands out (over pgxFreshArgs).
	minArgScratch = 4 << 10
	// maxArgScratch bounds the buffer a connection keeps; a statement with more arguments
	// allocates its own, as before.
	maxArgScratch = 256 << 10
)

// reserve returns buf with room for n more bytes. When buf lacks it: argScratch's buffer with
// buf's bytes copied to its start when buf is a statement's fresh buffer from pgx (see
// pgxFreshArgs) and the buffer is large enough; otherwise a new buffer of at least twice buf's
// capacity, which argScratch keeps for the next statements when buf was its own (the statement's
// arguments outgrew it). s may be nil (a map made without useFastArrays' scratch).
func (s *argScratch) reserve(buf []byte, n int) []byte {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	need := len(buf) + n
	if s != nil && cap(buf) <= pgxFreshArgs && cap(s.buf) >= need {
		return append(s.buf[:0], buf...)
	}
	size := max(2*cap(buf), need)
	keep := s != nil && (cap(buf) <= pgxFreshArgs || ownBuffer(buf, s.buf))
	if keep {
		size = max(size, minArgScratch)
	}
	grown := make([]byte, len(buf), size)
	copy(grown, buf)
	if keep && size <= maxArgScratch {
		s.buf = grown
	}
	return grown
}

// ownBuffer reports whether buf starts where scratch does (the same array).
func ownBuffer(buf, scratch []byte) bool {
	return cap(buf) > 0 && cap(scratch) > 0 && &buf[:1][0] == &scratch[:1][0]
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
