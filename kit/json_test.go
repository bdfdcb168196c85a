package kit_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/kit"
)

var _ = Describe("JSON pieces", func() {
	It("write strings, times and maps of strings as json.Marshal does", func() {
		r := rand.New(rand.NewPCG(21, 6))
		alphabet := []string{"a", "Z", " ", `"`, `\`, "<", ">", "&", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t", "é", "日",
			"🎉", "\u2028", "\u2029", "\xff", "\xc3", "\xed\xa0\x80", "\uFFFD"}
		text := func() string {
			b := []byte{}
			for range r.IntN(12) {
				b = append(b, alphabet[r.IntN(len(alphabet))]...)
			}
			return string(b)
		}
		for range 20000 {
			s := text()
			want, err := json.Marshal(s)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(kit.AppendJSONString([]byte("x"), s))).To(Equal("x"+string(want)), "%q", s)

			m := map[string]string{}
			for range r.IntN(20) {
				m[text()] = text()
			}
			want, err = json.Marshal(m)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(kit.AppendJSONStringMap(nil, m))).To(Equal(string(want)))

			t := time.Unix(r.Int64N(300_000_000_000)-62_000_000_000, r.Int64N(1e9)).In(time.FixedZone("Z", (r.IntN(48)-24)*1800))
			want, err = json.Marshal(t)
			got, ok := kit.AppendJSONTime(nil, t, true)
			Expect(ok).To(Equal(err == nil), "%v", t)
			if ok {
				Expect(string(got)).To(Equal(string(want)))
			}
		}
		var none map[string]string
		Expect(string(kit.AppendJSONStringMap(nil, none))).To(Equal("null"))
		Expect(string(kit.AppendJSONOptString(nil, nil))).To(Equal("null"))
	})
})

// FuzzAppendJSONString checks AppendJSONString against json.Marshal for any text.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "<&>", "a\u2028b", "\xff", "\x00\x1f", `"\`, "é🎉"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := kit.AppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: AppendJSONString %s, json.Marshal %s", s, got, want)
		}
	})
}
