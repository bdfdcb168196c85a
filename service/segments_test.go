package service_test

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service"
)

var _ = Describe("Segment", func() {
	DescribeTable("counts encoding and segments as the decisions say",
		func(body, encoding string, segments int) {
			Expect(service.Segment(body)).To(Equal(service.Segmentation{Encoding: encoding, Segments: segments}))
		},
		Entry("an empty body", "", "gsm7", 0),
		Entry("plain GSM text", "Your car is ready for pickup!", "gsm7", 1),
		Entry("one letter outside GSM-7 (ô) makes UCS-2", "Café à côté", "ucs2", 1),
		Entry("basic-set letters only", "èéùìòÇØøÅåÄÖÑÜßäöñüà £$¥§¿¡ΔΦΓΛΩΠΨΣΘΞ", "gsm7", 1),
		Entry("160 GSM characters: one segment", strings.Repeat("a", 160), "gsm7", 1),
		Entry("161 GSM characters: two segments", strings.Repeat("a", 161), "gsm7", 2),
		Entry("306 GSM characters: two parts of 153", strings.Repeat("a", 306), "gsm7", 2),
		Entry("307 GSM characters: three parts", strings.Repeat("a", 307), "gsm7", 3),
		Entry("153×10 GSM characters: ten segments", strings.Repeat("a", 153*10), "gsm7", 10),
		Entry("153×10+1 GSM characters: eleven segments", strings.Repeat("a", 153*10+1), "gsm7", 11),
		Entry("an extension character counts two septets", strings.Repeat("a", 158)+"€", "gsm7", 1),
		Entry("80 extension characters are 160 septets", strings.Repeat("{", 80), "gsm7", 1),
		Entry("81 extension characters are 162 septets", strings.Repeat("}", 81), "gsm7", 2),
		Entry("every extension character", "^{}\\[~]|€\f", "gsm7", 1),
		Entry("an escape pair is not split between parts", strings.Repeat("a", 152)+"€"+strings.Repeat("a", 10), "gsm7", 2),
		Entry("an escape pair that would straddle parts starts the next", strings.Repeat("a", 152)+"€"+strings.Repeat("a", 152), "gsm7", 3),
		Entry("one emoji makes UCS-2", "Hi 👋", "ucs2", 1),
		Entry("70 UCS-2 units: one segment", strings.Repeat("é", 10)+strings.Repeat("ж", 60), "ucs2", 1),
		Entry("71 UCS-2 units: two segments", strings.Repeat("ж", 71), "ucs2", 2),
		Entry("134 UCS-2 units: two parts of 67", strings.Repeat("ж", 134), "ucs2", 2),
		Entry("135 UCS-2 units: three parts", strings.Repeat("ж", 135), "ucs2", 3),
		Entry("an emoji is a surrogate pair: 35 emoji are 70 units", strings.Repeat("😀", 35), "ucs2", 1),
		Entry("36 emoji are 72 units", strings.Repeat("😀", 36), "ucs2", 2),
		Entry("a surrogate pair is not split between parts", strings.Repeat("ж", 66)+"😀"+strings.Repeat("ж", 5), "ucs2", 2),
		Entry("curly quotes are UCS-2", "“Hello”", "ucs2", 1),
		Entry("67×10 UCS-2 units: ten segments", strings.Repeat("ж", 67*10), "ucs2", 10),
		Entry("67×10+1 UCS-2 units: eleven segments", strings.Repeat("ж", 67*10+1), "ucs2", 11),
	)

	DescribeTable("makes a message MMS with attachments or more than 10 segments",
		func(body string, attachments int, typ string) {
			Expect(service.MessageType(service.Segment(body), attachments)).To(Equal(typ))
		},
		Entry("short text", "Hi", 0, "sms"),
		Entry("10 segments", strings.Repeat("a", 153*10), 0, "sms"),
		Entry("11 segments", strings.Repeat("a", 153*10+1), 0, "mms"),
		Entry("an attachment", "Hi", 1, "mms"),
		Entry("an attachment without text", "", 1, "mms"),
	)
})

// FuzzSegments checks the segment counter's invariants on any input: it never panics, GSM-7 is
// chosen exactly when every character is in the GSM-7 alphabet, and the count lies between the
// bounds the units allow.
func FuzzSegments(f *testing.F) {
	for _, s := range []string{"", "hello", strings.Repeat("a", 161), "€{}", "😀😀", "\xff\xfe", strings.Repeat("ж", 68)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		seg := service.Segment(body)
		units := 0
		for _, r := range body {
			if seg.Encoding == "ucs2" {
				if n := utf16.RuneLen(r); n > 0 {
					units += n
				} else {
					units++
				}
			} else if strings.ContainsRune("^{}\\[~]|€\f", r) {
				units += 2
			} else {
				units++
			}
		}
		single, part := 160, 153
		if seg.Encoding == "ucs2" {
			single, part = 70, 67
		}
		switch {
		case units == 0:
			if seg.Segments != 0 {
				t.Fatalf("%q: %d segments for an empty body", body, seg.Segments)
			}
		case units <= single:
			if seg.Segments != 1 {
				t.Fatalf("%q: %d units in %d segments, want 1", body, units, seg.Segments)
			}
		default:
			lo := (units + part - 1) / part
			if seg.Segments < lo || seg.Segments > lo+units/part {
				t.Fatalf("%q: %d units in %d segments, want about %d", body, units, seg.Segments, lo)
			}
		}
		if !utf8.ValidString(body) && seg.Encoding == "gsm7" {
			t.Fatalf("%q: invalid UTF-8 counted as GSM-7", body)
		}
	})
}

// BenchmarkSegment segments the e2e load's body.
func BenchmarkSegment(b *testing.B) {
	for b.Loop() {
		service.Segment("Load test message 1")
	}
}
