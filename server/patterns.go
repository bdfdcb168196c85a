package server

import (
	"regexp"
	"regexp/syntax"

	"github.com/getkin/kin-openapi/openapi3"
)

// compilePattern is the validator's compiler of the contract's `pattern`s (kin-openapi's
// RegexCompilerFunc; it caches what this returns, once per pattern). A pattern that is a
// sequence of ASCII character classes and literals, each repeated a fixed or bounded number of
// times, anchored at both ends (or an alternation of such sequences), as the contract's ids,
// phone numbers and codes are (`^acct_[0-7][0-9a-hjkmnp-tv-z]{25}$`, `^\+[1-9]\d{6,14}$`),
// is matched by simplePattern, byte by byte, without the regexp engine (0.3 µs a match: three a
// send); any other goes to regexp as kin-openapi would compile it.
func compilePattern(expr string) (openapi3.RegexMatcher, error) {
	expr = goRegexp(expr)
	if p, ok := newSimplePattern(expr); ok {
		return p, nil
	}
	return regexp.Compile(expr)
}

// codepointEscape is a \uXXXX escape, which kin-openapi rewrites to Go's \x{XXXX} before it
// compiles a pattern.
var codepointEscape = regexp.MustCompile(`(?P<replaced_with_slash_x>\\u)(?P<code>[0-9A-F]{4})`)

// goRegexp is a pattern as kin-openapi hands it to regexp.Compile.
func goRegexp(re string) string { return codepointEscape.ReplaceAllString(re, `\x{${code}}`) }

// simplePattern is a pattern as newSimplePattern reads it: it matches a string that one of its
// alternatives matches whole.
type simplePattern struct {
	alternatives [][]patternItem
	expr         string
}

// patternItem is a run of min to max (max < 0: any number of) bytes of set, ASCII characters.
type patternItem struct {
	set      [2]uint64
	min, max int
}

func (it *patternItem) has(c byte) bool { return c < 128 && it.set[c>>6]&(1<<(c&63)) != 0 }

// String is the pattern's text, as a *regexp.Regexp's.
func (p *simplePattern) String() string { return p.expr }

// MatchString reports whether the pattern matches s, as regexp's MatchString of the same pattern.
func (p *simplePattern) MatchString(s string) bool {
	for _, items := range p.alternatives {
		if matchItems(items, s) {
			return true
		}
	}
	return false
}

// matchItems reports whether items match the whole of s. An alternative has at most one item of
// variable length (newSimplePattern), so the backtracking below tries each of its lengths once.
func matchItems(items []patternItem, s string) bool {
	for i := range items {
		it := &items[i]
		n := 0
		for n < len(s) && (it.max < 0 || n < it.max) && it.has(s[n]) {
			n++
		}
		if n < it.min {
			return false
		}
		if it.min == it.max || i == len(items)-1 {
			s = s[n:]
			continue
		}
		for k := n; k >= it.min; k-- {
			if matchItems(items[i+1:], s[k:]) {
				return true
			}
		}
		return false
	}
	return s == ""
}

// newSimplePattern reads expr (Go's syntax, as regexp.Compile takes it) as a simplePattern, when
// it is one: ^ and $ around a sequence, or around a group of alternative sequences, each of
// literals and classes of ASCII characters, each of them once or repeated ({m,n}, ?, *, +),
// with at most one item of variable length in each sequence. Anything else (case folding, a
// character outside ASCII, a nested group, another operator) is not.
func newSimplePattern(expr string) (*simplePattern, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 3 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil, false
	}
	body := re.Sub[1 : len(re.Sub)-1]
	p := &simplePattern{expr: expr}
	if len(body) == 1 && body[0].Op == syntax.OpCapture {
		inner := body[0].Sub[0]
		if inner.Op == syntax.OpAlternate {
			for _, alt := range inner.Sub {
				items, ok := sequence([]*syntax.Regexp{alt})
				if !ok {
					return nil, false
				}
				p.alternatives = append(p.alternatives, items)
			}
			return p, true
		}
		body = []*syntax.Regexp{inner}
	}
	items, ok := sequence(body)
	if !ok {
		return nil, false
	}
	p.alternatives = [][]patternItem{items}
	return p, true
}

// sequence reads res, one after another, as items; a concatenation among them is read in place.
func sequence(res []*syntax.Regexp) ([]patternItem, bool) {
	var items []patternItem
	variable := 0
	for _, re := range res {
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		switch re.Op {
		case syntax.OpConcat:
			more, ok := sequence(re.Sub)
			if !ok {
				return nil, false
			}
			items = append(items, more...)
			continue
		case syntax.OpEmptyMatch:
			continue
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				it, ok := class([]rune{r, r})
				if !ok {
					return nil, false
				}
				items = append(items, it)
			}
			continue
		case syntax.OpCharClass:
			it, ok := class(re.Rune)
			if !ok {
				return nil, false
			}
			items = append(items, it)
			continue
		}
		var lo, hi int
		switch re.Op {
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		default:
			return nil, false
		}
		sub := re.Sub[0]
		if sub.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		var it patternItem
		var ok bool
		switch {
		case sub.Op == syntax.OpCharClass:
			it, ok = class(sub.Rune)
		case sub.Op == syntax.OpLiteral && len(sub.Rune) == 1:
			it, ok = class([]rune{sub.Rune[0], sub.Rune[0]})
		}
		if !ok {
			return nil, false
		}
		it.min, it.max = lo, hi
		items = append(items, it)
	}
	for _, it := range items {
		if it.min != it.max {
			variable++
		}
	}
	return items, variable <= 1
}

// class is the item of one character of the ranges (pairs of runes, as syntax.Regexp.Rune has
// them), when they are all ASCII.
func class(ranges []rune) (patternItem, bool) {
	it := patternItem{min: 1, max: 1}
	if len(ranges) == 0 || len(ranges)%2 != 0 {
		return it, false
	}
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo < 0 || hi >= 128 || lo > hi {
			return it, false
		}
		for c := lo; c <= hi; c++ {
			it.set[c>>6] |= 1 << (c & 63)
		}
	}
	return it, true
}
