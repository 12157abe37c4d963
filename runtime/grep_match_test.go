package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refLine is one line matched by the definition.
type refLine struct {
	N    int
	Text string
}

// refMatchLines is Grep's contract, the slow way: the pattern matched
// against each line alone.
func refMatchLines(re *regexp.Regexp, data []byte, limit int) []refLine {
	var out []refLine
	for n := 1; len(data) > 0 && len(out) < limit; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if re.Match(line) {
			out = append(out, refLine{n, string(line)})
		}
	}
	return out
}

// The alphabet of the generated texts and patterns: line ends, a CR,
// the letters with non-ASCII cases (k: the Kelvin sign, s: the long s),
// accented letters in both cases, word and non-word characters.
var matchAlphabet = []string{"\n", "\n", "\r", "a", "b", "c", "A", "B", "k", "K", "\u212a", "s", "S", "\u017f", "é", "É", " ", "\t", "_", "N", "n", "e", "E", "w", "W", "(", "."}

func randomText(r *rand.Rand, n int) []byte {
	var b strings.Builder
	for range n {
		b.WriteString(matchAlphabet[r.IntN(len(matchAlphabet))])
	}
	return []byte(b.String())
}

// randomPattern builds a small pattern from the features Grep documents
// (RE2 syntax: classes, anchors, word boundaries, repetition,
// alternation, groups).
func randomPattern(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "k", "K", "s", "é", "É", "\u212a", "ab", "New", "\\(", "\\.", ".", "[ab]", "[^a]", "[^\\n]", "\\s", "\\S", "\\w", "\\W", "\\b", "\\B",
		"^", "$", "\\A", "\\z", "\\n", "\\r", "[[:space:]]", "\\pL", "(?s:.)", "(?i:k)", "(?m:^)", "(?m:$)", "x*", ""}
	if depth <= 0 || r.IntN(3) == 0 {
		return atoms[r.IntN(len(atoms))]
	}
	a, b := randomPattern(r, depth-1), randomPattern(r, depth-1)
	switch r.IntN(7) {
	case 0:
		return a + "|" + b
	case 1:
		return "(" + a + ")*"
	case 2:
		return "(?:" + a + ")+"
	case 3:
		return "(" + a + ")?" + b
	case 4:
		return "(?:" + a + "){1,2}"
	case 5:
		return "(" + a + "|" + b + ")c"
	}
	return a + b
}

// TestLineMatcherAgreesWithLineByLine runs the matcher and the
// definition over generated and chosen patterns and texts: the same
// lines, numbers and texts, for each limit.
func TestLineMatcherAgreesWithLineByLine(t *testing.T) {
	patterns := []string{
		"", "a", "ab", "New", "NewReader|NewWriter", "a|b|c", "a|\\n", "a\\nb", "a\\nb|c", "[\\n]", "^", "$", "^$", "^a", "a$", "\\Aa", "a\\z",
		"\\Aa\\z", "(?m)^a$", "\\ba\\b", "\\Bb", "a.b", "(?s)a.b", "a[^b]c", "a\\sb", "\\s+$", "\\r$", "x*", "a*", "(a|b)c", "é", "É", "(?i)é", "\\pL+",
		"(?i)k", "(?i)s", "(?i)ks", "(?i)kNew", "(?i)new", "k", "\u212a", "(?i)\u212a", "[kK]", "a|", "(?:)", "a{2}", "a{0,2}b", "(a+)(b+)", "a+?", "(?U)a+",
		"[[:alpha:]]", "[[:^alpha:]]", "\\(", "\\.\\.", "e\\.|N", "(?i)e\\.|N", "aé|éa", "[aé]b", "new", "NEW", "(?i)new|ab", "(?i:ne)w", "(?i)ne\\(w",
		`(?P<n>a)b`, `\Qa.b\E`, `a{0}`, `(?U)a+?b`, `\x{212a}`, `[^\x00-\x{10FFFF}]`, `(?i)[k-s]`, `(?s:a.)`, `\pN`, `(?i)\x{17f}`, `[\s\S]`, `(?m:a$)\n`,
		"[0-9]", "[a-c]{2}", "(?i)[a-c]{2}", "[a-k]+S", "\\w+\\(", "[a-cé]{2}|\\bk", "[À-ÿ]w", "[a-c]*[A-C]", "(?:[a-c]|^)b+", "\\b[a-k]{2}", "[a-k]{1,2}$",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		patterns = append(patterns, randomPattern(r, 3))
	}
	texts := [][]byte{nil, []byte("\n"), []byte("a"), []byte("a\n"), []byte("\n\n"), []byte("ab\r\n\r\nab"), []byte("a\nb\n"), []byte("\u212a\n\u017f\nkS")}
	for range 40 {
		texts = append(texts, randomText(r, r.IntN(60)))
	}
	for _, p := range patterns {
		for _, ic := range []bool{false, true} {
			flags := ""
			if ic {
				flags = "(?i)"
			}
			ref, err := regexp.Compile(flags + p)
			if err != nil {
				continue // e.g. a repetition of an empty-width assertion
			}
			m, err := newLineMatcher(p, ic)
			require.NoError(t, err, p)
			for i, text := range texts {
				for _, limit := range []int{1, 2, 1 << 30} {
					want := refMatchLines(ref, text, limit)
					var got []refLine
					m.matchLines(text, limit, func(n int, line []byte) { got = append(got, refLine{n, string(line)}) })
					if fmt.Sprint(want) != fmt.Sprint(got) {
						t.Fatalf("pattern %q ignoreCase=%v text %d %q limit %d:\n got %v\nwant %v", p, ic, i, text, limit, got, want)
					}
				}
			}
		}
	}
}

// TestLineMatcherTakesTheFastPaths pins which patterns skip the regexp:
// without this, every pattern could go through the slow path and still
// agree with the definition.
func TestLineMatcherTakesTheFastPaths(t *testing.T) {
	tests := []struct {
		pattern    string
		ignoreCase bool
		exact      bool
		probes     string // the probe bytes
		never      bool
		starts     string // the start bytes, without probes
	}{
		{pattern: "func NewReader", exact: true, probes: "N"},
		{pattern: "NewReader|NewWriter", exact: true, probes: "NW"},
		{pattern: `foo\(`, exact: true, probes: "("},
		{pattern: `func\s+NewReader`, probes: "N"},
		{pattern: `(?:get|set)Value\(\)`, exact: true, probes: "VV"},
		{pattern: `(?:get|set)\w+\(\)`, probes: "("},
		{pattern: "todo", ignoreCase: true, exact: true, probes: "Dd"},
		{pattern: "func newreader", ignoreCase: true, exact: true, probes: "Ww"},
		{pattern: "(?i)new|ab", exact: true, probes: "WwBb"},
		{pattern: "(?i)foo\\(", exact: true, probes: "("},
		{pattern: "(?i:foo)bar", probes: "b"},
		{pattern: "(?i)kelvin", probes: "Vv"}, // never k: the Kelvin sign has it as a case; not exact: a match may be longer
		{pattern: "(?i)ks", starts: "Kk\xe2"}, // no byte finds every case: the start bytes
		{pattern: `\d+`, starts: "0123456789"},
		{pattern: `[0-9]{7}[a-f]{4}|x[a-z]`, starts: "0123456789x"}, // not the probes of a-f: common letters
		{pattern: `[0-9]{3}|x[0-9]`, starts: "0123456789x"},
		{pattern: `(?i)\bk[0-9]`, starts: "Kk\xe2"},
		{pattern: `[a-z]?[0-9]+`, starts: "0123456789abcdefghijklmnopqrstuvwxyz"},
		{pattern: `\S+`},    // any byte but a few: no filter
		{pattern: `[0-9]*`}, // matches empty lines
		{pattern: "a\\nb", never: true},
		{pattern: "a\\nb|zq", exact: true, probes: "z"},
	}
	for _, tt := range tests {
		m, err := newLineMatcher(tt.pattern, tt.ignoreCase)
		require.NoError(t, err)
		var probes []byte
		for _, p := range m.probes {
			probes = append(probes, p.b)
		}
		require.Equal(t, tt.probes, string(probes), tt.pattern)
		require.Equal(t, tt.exact, m.exact, tt.pattern)
		require.Equal(t, tt.never, m.never, tt.pattern)
		var starts []byte
		for b := range 256 {
			if m.starts != nil && m.starts[b] {
				starts = append(starts, byte(b))
			}
		}
		require.Equal(t, tt.starts, string(starts), tt.pattern)
	}
}
