package store_test

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("The hot paths' array arguments (PostgreSQL)", func() {
	str := func(s string) *string { return &s }
	at := func(t time.Time) *time.Time { return &t }
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.FixedZone("CET", 3600)
	}
	texts := []any{
		[]string(nil), []string{}, []string{""}, []string{"msg_01", "", "é \"quoted\" {braces}, commas", "\x00\xff"},
		[]*string(nil), []*string{}, []*string{nil}, []*string{str("a"), nil, str(""), str("z")},
	}
	times := []any{
		[]time.Time(nil), []time.Time{},
		[]time.Time{time.Date(2026, 11, 25, 4, 30, 1, 123456789, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC),
			time.Date(2026, 3, 29, 2, 30, 0, 1500, berlin), {}, time.Unix(0, -1500).UTC()},
		[]*time.Time(nil), []*time.Time{}, []*time.Time{nil},
		[]*time.Time{at(time.Date(2026, 11, 25, 4, 30, 1, 999, berlin)), nil, at(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC))},
	}
	fast, plain := store.FastArrayMap(), pgtype.NewMap()
	same := func(oid uint32, values []any) {
		for _, v := range values {
			Expect(store.IsFastArrayPlan(fast, oid, v)).To(BeTrue(), "%T as %d", v, oid)
			want, err := plain.Encode(oid, pgtype.BinaryFormatCode, v, nil)
			Expect(err).NotTo(HaveOccurred())
			got, err := fast.Encode(oid, pgtype.BinaryFormatCode, v, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want), "%T %v as %d", v, v, oid)
			// After a statement's earlier arguments, whichever room the buffer has left.
			for _, room := range []int{0, 3, 1000} {
				prior := append(make([]byte, 0, 5+room), "prior"...)
				got, err = fast.Encode(oid, pgtype.BinaryFormatCode, v, prior)
				Expect(err).NotTo(HaveOccurred())
				if want != nil {
					Expect(got).To(Equal(append([]byte("prior"), want...)), "%T %v as %d", v, v, oid)
				}
			}
		}
	}

	It("writes text and varchar arrays byte for byte as pgx does, NULL for a nil slice and a nil element", func() {
		same(pgtype.TextArrayOID, texts)
		same(pgtype.VarcharArrayOID, texts)
	})

	It("writes timestamptz arrays byte for byte as pgx does, in any location, before 2000 and before 1970", func() {
		same(pgtype.TimestamptzArrayOID, times)
	})

	It("keeps a connection's argument buffer for its next statements, never one that the statement under way uses", func() {
		m := store.FastArrayMap()
		texts := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("msg_%026d", i)
			}
			return out
		}
		encode := func(v any, buf []byte) []byte {
			out, err := m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, v, buf)
			Expect(err).NotTo(HaveOccurred())
			return out
		}
		want := func(prior []byte, v any) []byte {
			out, err := pgtype.NewMap().Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, v, nil)
			Expect(err).NotTo(HaveOccurred())
			return append(append([]byte(nil), prior...), out...)
		}
		same := func(a, b []byte) bool { return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0] }

		// A statement: an argument pgx wrote, then two arrays, as pgx starts it (256 bytes).
		first := append(make([]byte, 0, 256), "$1"...)
		a := encode(texts(20), first)
		Expect(a).To(Equal(want(first, texts(20))))
		b := encode(texts(10), a)
		Expect(b).To(Equal(want(a, texts(10))))
		Expect(same(a, b)).To(BeTrue(), "the second array goes on after the first")
		kept := append([]byte(nil), b...)

		// The next statement starts with a fresh buffer from pgx: the kept one is handed out again.
		c := encode(texts(30), make([]byte, 0, 256))
		Expect(c).To(Equal(want(nil, texts(30))))
		Expect(same(b, c)).To(BeTrue(), "the next statement reuses the buffer")

		// A statement whose buffer pgx grew itself (an argument of its own past 256 bytes) may have
		// arguments in the kept buffer still: it is left alone, and kept for the statements after.
		d := encode(texts(10), make([]byte, 0, 256))
		Expect(same(d, c)).To(BeTrue())
		snapshot := append([]byte(nil), d...)
		grownByPgx := append(append(make([]byte, 0, len(d)+100), d...), "jsonb"...)
		e := encode(texts(20), grownByPgx)
		Expect(e).To(Equal(want(grownByPgx, texts(20))))
		Expect(same(e, d)).To(BeFalse())
		Expect(d).To(Equal(snapshot))
		Expect(same(encode(texts(10), make([]byte, 0, 256)), d)).To(BeTrue())

		// Arguments over the bound are the statement's own and are not kept.
		big := encode(texts(20000), make([]byte, 0, 256))
		Expect(big).To(Equal(want(nil, texts(20000))))
		f := encode(texts(3), make([]byte, 0, 256))
		Expect(same(f, big)).To(BeFalse())
		Expect(kept).NotTo(BeEmpty())
	})

	It("leaves every other value and format to pgx", func() {
		for _, c := range []struct {
			oid   uint32
			value any
		}{
			{pgtype.TextArrayOID, []int32{1, 2}},
			{pgtype.TimestamptzArrayOID, []string{"2026-11-25 04:30:00+00"}},
			{pgtype.Int4ArrayOID, []int32{1, 2}},
			{pgtype.TextArrayOID, pgtype.FlatArray[string]{"a"}},
		} {
			Expect(store.IsFastArrayPlan(fast, c.oid, c.value)).To(BeFalse(), "%T as %d", c.value, c.oid)
			want, wantErr := plain.Encode(c.oid, pgtype.BinaryFormatCode, c.value, nil)
			got, err := fast.Encode(c.oid, pgtype.BinaryFormatCode, c.value, nil)
			Expect(got).To(Equal(want))
			Expect(err == nil).To(Equal(wantErr == nil))
		}
		want, err := plain.Encode(pgtype.TextArrayOID, pgtype.TextFormatCode, []string{"a", "b c"}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(fast.Encode(pgtype.TextArrayOID, pgtype.TextFormatCode, []string{"a", "b c"}, nil)).To(Equal(want))
	})

	It("scans optional text and times as pgx does: nil for NULL, a new value otherwise, in both formats", func() {
		when := time.Date(2026, 11, 25, 4, 30, 1, 123456000, time.UTC)
		for _, c := range []struct {
			oid    uint32
			values []any
			target func() any
		}{
			{pgtype.TextOID, []any{"msg_01", "", "é"}, func() any { return new(*string) }},
			{pgtype.VarcharOID, []any{"x"}, func() any { return new(*string) }},
			{pgtype.TimestamptzOID, []any{when, time.Unix(0, 0).UTC()}, func() any { return new(*time.Time) }},
		} {
			for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
				Expect(store.IsOptionalScanPlan(fast, c.oid, format, c.target())).To(BeTrue(), "%d in format %d", c.oid, format)
				for _, v := range append(c.values, nil) {
					var src []byte
					if v != nil {
						src, err = plain.Encode(c.oid, format, v, nil)
						Expect(err).NotTo(HaveOccurred())
					}
					want, got := c.target(), c.target()
					Expect(plain.Scan(c.oid, format, src, want)).To(Succeed())
					Expect(fast.Scan(c.oid, format, src, got)).To(Succeed())
					Expect(got).To(Equal(want), "%v as %d in format %d", v, c.oid, format)
				}
			}
		}
		// A NULL over a value that the target held.
		s := "before"
		held := &s
		Expect(fast.Scan(pgtype.TextOID, pgtype.BinaryFormatCode, nil, &held)).To(Succeed())
		Expect(held).To(BeNil())
	})
})
