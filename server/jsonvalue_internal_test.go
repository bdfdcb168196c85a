package server

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// randomJSON writes a random JSON text of at most depth levels, in the forms a client may use:
// white space anywhere between tokens, every escape (a character in \u form in either case,
// surrogate pairs, lone surrogates, \u0000), raw multi-byte characters, numbers of every form,
// equal keys in one object.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	space := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\n\r"[r.IntN(4)])
		}
	}
	str := func() {
		b.WriteByte('"')
		pieces := []string{"a", "Z", "0", " ", "é", "日本", "🎉", "\u2028", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`,
			`\u00e9`, `\u00E9`, `\u0041`, `\u0000`, `\ud83c\udf89`, `\uD83C\uDF89`, `\ud800`, `\udc00`, `\ud800x`, `\ud800\u0041`,
			`\uffff`, `\ufffd`, "\ufffd", `"`, `\`, "\x01", "\x7f", "\xff", "\xc3", "\xed\xa0\x80", `\x`, `\u12`, `\u12G4`}
		n := r.IntN(5)
		for range n {
			p := pieces[r.IntN(len(pieces))]
			if r.IntN(4) != 0 && (p == `"` || p == `\` || p == "\x01" || p == "\xff" || p == "\xc3" || p == "\xed\xa0\x80" ||
				p == `\x` || p == `\u12` || p == `\u12G4` || p == `\ud800` || p == `\udc00` || p == `\ud800x` || p == `\ud800\u0041`) {
				p = "b" // mostly valid text
			}
			b.WriteString(p)
		}
		b.WriteByte('"')
	}
	switch k := r.IntN(10); {
	case depth > 0 && k < 3:
		b.WriteByte('{')
		space()
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
				space()
			}
			if r.IntN(4) == 0 {
				b.WriteString(`"k"`) // equal keys: the last wins
			} else {
				str()
			}
			space()
			b.WriteByte(':')
			space()
			randomJSON(r, b, depth-1)
			space()
		}
		b.WriteByte('}')
	case depth > 0 && k < 5:
		b.WriteByte('[')
		space()
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
				space()
			}
			randomJSON(r, b, depth-1)
			space()
		}
		b.WriteByte(']')
	case k < 7:
		str()
	case k < 9:
		nums := []string{"0", "-0", "1", "-12", "3.25", "1e9", "1E+2", "2e-3", "-0.5e10", "12345678901234567890123",
			"01", "1.", ".5", "-", "1e", "+1", "0x10", "1.5e+", "NaN", "Infinity"}
		n := nums[r.IntN(len(nums))]
		if r.IntN(4) != 0 {
			n = nums[r.IntN(10)]
		}
		b.WriteString(n)
	default:
		b.WriteString([]string{"true", "false", "null", "nul", "True", "truee"}[r.IntN(6)*min(1, r.IntN(4))])
	}
}

var _ = Describe("Decoding a JSON body", func() {
	// same checks that decodeJSONBody answers as the slow way (encoding/json and the checks after
	// it) does: the same value, or the same error.
	same := func(data []byte) (fast bool) {
		want, wantErr := slowJSONBody(data)
		got, gotErr := decodeJSONBody(data)
		if wantErr != nil {
			ExpectWithOffset(1, gotErr).To(HaveOccurred(), "%q", data)
			ExpectWithOffset(1, gotErr.Error()).To(Equal(wantErr.Error()), "%q", data)
		} else {
			ExpectWithOffset(1, gotErr).NotTo(HaveOccurred(), "%q", data)
			if want == nil {
				ExpectWithOffset(1, got).To(BeNil(), "%q", data)
			} else {
				ExpectWithOffset(1, got).To(Equal(want), "%q", data)
			}
		}
		_, fast = decodeJSONValue(data)
		if fast {
			_, err := slowJSONBody(data)
			if err != nil {
				_, isNUL := err.(*nulError)
				ExpectWithOffset(1, isNUL).To(BeTrue(), "decodeJSONValue read %q, which is not JSON: %v", data, err)
			}
		}
		return fast
	}

	It("reads what encoding/json reads, the same, and leaves the rest to it", func() {
		r := rand.New(rand.NewPCG(21, 23))
		fast, valid := 0, 0
		for range 100000 {
			var b strings.Builder
			space := strings.Repeat(" ", r.IntN(2))
			b.WriteString(space)
			randomJSON(r, &b, 4)
			b.WriteString(space)
			data := []byte(b.String())
			const some, more = "{}[],:\"\\ 0a", "{}[],:\"\\ 0a\x00\xff"
			if r.IntN(5) == 0 && len(data) > 0 {
				// A byte changed, removed or added anywhere, or the text cut short.
				at := r.IntN(len(data))
				switch r.IntN(4) {
				case 0:
					data[at] = more[r.IntN(len(more))]
				case 1:
					data = append(data[:at], data[at+1:]...)
				case 2:
					data = append(data[:at], append([]byte{some[r.IntN(len(some))]}, data[at:]...)...)
				default:
					data = data[:at]
				}
			}
			if same(data) {
				fast++
			}
			if _, err := slowJSONBody(data); err == nil {
				valid++
			}
		}
		// Every valid body is read the fast way, and the samples are not mostly broken ones.
		Expect(fast).To(BeNumerically(">=", valid))
		Expect(valid).To(BeNumerically(">", 30000))
	})

	DescribeTable("answers as encoding/json",
		func(body string) { same([]byte(body)) },
		Entry("the e2e load's send", `{"to":"+15550000123","from":"+14155550100","body":"Load test message 1"}`),
		Entry("an empty body", ``),
		Entry("white space only", " \n"),
		Entry("two values", `{"a":1}{"a":2}`),
		Entry("a value and garbage", `{"a":1} x`),
		Entry("a byte order mark", "\ufeff{}"),
		Entry("a NUL key", `{"a\u0000":"b"}`),
		Entry("a nested NUL", `{"metadata":{"note":"x\u0000"}}`),
		Entry("a lone surrogate", `{"a":"\udfff"}`),
		Entry("a raw control character", "{\"a\":\"\x1f\"}"),
		Entry("an encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}"),
		Entry("nesting beyond the fast way's depth", strings.Repeat("[", maxJSONDepth+1)+strings.Repeat("]", maxJSONDepth+1)),
		Entry("nesting beyond encoding/json's depth", strings.Repeat("[", 10001)+strings.Repeat("]", 10001)),
		Entry("nesting at the fast way's depth", strings.Repeat(`{"a":`, maxJSONDepth)+"1"+strings.Repeat("}", maxJSONDepth)),
		Entry("a long number", `[`+strings.Repeat("9", 400)+`]`),
		Entry("an unterminated string", `{"a":"b`),
		Entry("an escape at the end", `"\`),
	)

	It("reads bodies of every size", func() {
		for _, n := range []int{1, 100, 10000, 1 << 20} {
			same([]byte(`{"body":"` + strings.Repeat("é", n) + `","n":` + strconv.Itoa(n) + `}`))
		}
	})
})

// FuzzJSONBody checks decodeJSONBody against the slow way on any bytes.
func FuzzJSONBody(f *testing.F) {
	for _, s := range []string{`{"to":"+15550000123","body":"x"}`, `[1,-2.5e3,"\ud83c\udf89",null,true,{}]`, `"\u0000"`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := slowJSONBody(data)
		got, gotErr := decodeJSONBody(data)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("%q: %v, want %v", data, gotErr, wantErr)
		}
		if wantErr == nil {
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if string(a) != string(b) {
				t.Fatalf("%q: %s, want %s", data, b, a)
			}
		}
	})
}
