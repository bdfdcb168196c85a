package server

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen"
)

// contractPatterns are the patterns of every schema of the contract (its components, parameters
// and bodies, however deep).
func contractPatterns() []string {
	spec, err := gen.GetSwagger()
	Expect(err).NotTo(HaveOccurred())
	seen := map[*openapi3.Schema]bool{}
	found := map[string]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Pattern != "" {
			found[s.Pattern] = true
		}
		for _, p := range s.Properties {
			walk(p)
		}
		for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, b := range l {
				walk(b)
			}
		}
		walk(s.Items)
		walk(s.Not)
		walk(s.AdditionalProperties.Schema)
	}
	for _, s := range spec.Components.Schemas {
		walk(s)
	}
	for _, p := range spec.Components.Parameters {
		walk(p.Value.Schema)
	}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				walk(p.Value.Schema)
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(mt.Schema)
				}
			}
		}
		for _, p := range item.Parameters {
			walk(p.Value.Schema)
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for p := range found {
			if !yield(p) {
				return
			}
		}
	})
}

// patternSample is a string that pattern's simplePattern would match or nearly so: one of its
// alternatives filled with random members of each item's set, then perhaps altered by a byte
// or a character inserted, replaced or removed.
func patternSample(r *rand.Rand, p *simplePattern) string {
	items := p.alternatives[r.IntN(len(p.alternatives))]
	var b []byte
	for _, it := range items {
		var members []byte
		for c := range 128 {
			if it.has(byte(c)) {
				members = append(members, byte(c))
			}
		}
		n := it.min
		if it.max < 0 {
			n += r.IntN(5)
		} else if it.max > it.min {
			n += r.IntN(it.max - it.min + 1)
		}
		if r.IntN(8) == 0 {
			n += r.IntN(3) - 1
		}
		for range max(n, 0) {
			b = append(b, members[r.IntN(len(members))])
		}
	}
	odd := []string{"\n", "\x00", "é", "\xff", "ａ", "٣", "+", "_", "A", "a", "0", "9", " ", "$", "^"}
	for range r.IntN(3) {
		at := 0
		if len(b) > 0 {
			at = r.IntN(len(b) + 1)
		}
		bit := odd[r.IntN(len(odd))]
		switch r.IntN(3) {
		case 0:
			b = slices.Insert(b, at, []byte(bit)...)
		case 1:
			if at < len(b) {
				b = slices.Delete(b, at, at+1)
			}
		default:
			if at < len(b) {
				b[at] = bit[0]
			}
		}
	}
	return string(b)
}

var _ = Describe("The contract's patterns", func() {
	It("match what regexp matches, for each pattern of openapi.yaml", func() {
		patterns := contractPatterns()
		Expect(len(patterns)).To(BeNumerically(">", 20))
		r := rand.New(rand.NewPCG(21, 22))
		simple := 0
		for _, pattern := range patterns {
			expr := goRegexp(pattern)
			want := regexp.MustCompile(expr)
			got, err := compilePattern(pattern)
			Expect(err).NotTo(HaveOccurred())
			p, ok := got.(*simplePattern)
			if !ok {
				continue
			}
			simple++
			matched := 0
			for range 20000 {
				s := patternSample(r, p)
				Expect(p.MatchString(s)).To(Equal(want.MatchString(s)), "pattern %s, %q", pattern, s)
				if want.MatchString(s) {
					matched++
				}
			}
			Expect(matched).To(BeNumerically(">", 1000), "pattern %s: too few samples match", pattern)
			for _, s := range []string{"", "\n", strings.Repeat("9", 100000)} {
				Expect(p.MatchString(s)).To(Equal(want.MatchString(s)), "pattern %s, %q", pattern, s)
			}
		}
		// Ids, phone numbers, sender numbers, codes: all but the clock's alternation in a group.
		Expect(simple).To(Equal(len(patterns) - 1))
	})

	DescribeTable("match what regexp matches, for patterns of other shapes",
		func(pattern string, samples ...string) {
			want := regexp.MustCompile(goRegexp(pattern))
			got, err := compilePattern(pattern)
			Expect(err).NotTo(HaveOccurred())
			for _, s := range samples {
				Expect(got.MatchString(s)).To(Equal(want.MatchString(s)), "pattern %s, %q", pattern, s)
			}
		},
		Entry("a variable run before a fixed one of the same class", `^\d{2,5}\d{2}$`, "1234", "123", "1234567", "12345678"),
		Entry("optional and repeated items", `^a?b+c*$`, "b", "abbb", "abc", "ac", "", "bbbcc"),
		Entry("an unanchored pattern", `\d{3}`, "a123b", "12"),
		Entry("anchored at one end", `^ab`, "abc", "cab"),
		Entry("case folding", `^(?i)abc$`, "ABC", "abc", "abd"),
		Entry("non-ASCII classes", `^[é-ü]{2}$`, "éü", "ab"),
		Entry("two variable runs", `^a*b*$`, "aabb", "ba"),
		Entry("a \\u escape", `^\u0041{2}$`, "AA", "A"),
		Entry("a dot", `^a.c$`, "abc", "a\nc"),
		Entry("an empty alternative", `^(a|)$`, "a", "", "b"),
	)

	It("are refused as regexp refuses them", func() {
		_, err := compilePattern(`^(a$`)
		Expect(err).To(HaveOccurred())
	})
})

// BenchmarkPattern matches the e2e load's sender number, as the send's validation does.
func BenchmarkPattern(b *testing.B) {
	const pattern = `^(\+[1-9]\d{6,14}|\d{5,6}|pn_[0-7][0-9a-hjkmnp-tv-z]{25})$`
	b.Run("simplePattern", func(b *testing.B) {
		m, _ := compilePattern(pattern)
		for b.Loop() {
			m.MatchString("+14155550100")
		}
	})
	b.Run("regexp", func(b *testing.B) {
		m := regexp.MustCompile(pattern)
		for b.Loop() {
			m.MatchString("+14155550100")
		}
	})
}
