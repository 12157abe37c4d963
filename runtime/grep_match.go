package runtime

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How Grep finds the matching lines of a file. The contract is the
// pattern matched against each line alone (without its "\n"); a file is
// never split into lines to get there:
//
//   - The pattern is rewritten so that no match can cross a line end:
//     "." and every class stop matching "\n", a literal "\n" matches
//     nothing, and \A and \z become line anchors (which they are for a
//     line alone). The rewritten pattern is run over the whole file in
//     multi-line mode; its leftmost match lies inside one line, and that
//     line matches on its own. The search goes on from the next line.
//   - Better, when every match must contain one of a few literals (the
//     pattern itself, the "New" and {"Reader", "Writer"} of
//     "NewReader|NewWriter", the "func" of "func\s+\w+"), the file is
//     scanned for the rarest byte of each literal with bytes.IndexByte
//     (SIMD), the literal is compared in place, and only the line around
//     a candidate is given to the regexp; when the pattern is nothing but
//     such literals a literal found is the match, and no regexp runs at
//     all. A case-insensitive literal is compared in place when each of
//     its folded forms is the literal in another ASCII case (not so with
//     k or s, which the Kelvin and long s signs fold to).
//   - Without a usable literal, when a non-empty match can start with
//     few bytes, the regexp runs only on the lines holding one of them.
//
// grep_match_test.go checks every path against the line-by-line
// definition.

// lineMatcher finds the lines of a text that match one pattern. It is
// read-only once built and safe for concurrent use.
type lineMatcher struct {
	// re is the pattern rewritten to stay within lines, in multi-line
	// mode (see above).
	re *regexp.Regexp
	// probes find candidates: every matching line contains one of
	// their literals. None: no prefilter, re scans the text.
	probes []probe
	// exact: the pattern matches exactly the probes' literals (each
	// case-sensitive or folded in ASCII); a literal found is a match.
	exact bool
	// never: no line can match (the pattern needs a "\n").
	never bool
	// starts, without probes, holds every byte a match can start with
	// (nil: any); the regexp runs only on lines holding one.
	starts *[256]bool
}

// probe finds the places where one literal may occur by the literal's
// rarest byte.
type probe struct {
	b byte
	// lit is the literal and off the offset of b in it. With fold, lit
	// is in lower case and matches in any ASCII case (one probe per case
	// of b). lit is nil for a case-folded literal whose matches can
	// differ in length (it has a k, an s or a non-ASCII letter): its
	// candidates are the places of b, and re verifies them.
	lit  []byte
	off  int
	fold bool
}

// maxLiterals bounds the literals of a prefilter (and the strings a
// finite pattern is expanded to); more cost more passes over the text
// than the regexp would.
const maxLiterals = 8

// newLineMatcher compiles pattern (Go RE2 syntax), case-insensitively
// with ignoreCase.
func newLineMatcher(pattern string, ignoreCase bool) (*lineMatcher, error) {
	flags := syntax.Perl
	prefix := ""
	if ignoreCase {
		flags |= syntax.FoldCase
		prefix = "(?i)"
	}
	// The pattern's own errors, as regexp words them.
	if _, err := regexp.Compile(prefix + pattern); err != nil {
		return nil, err
	}
	parsed, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, err
	}
	local := withinLines(parsed).Simplify()
	re, err := regexp.Compile("(?m)" + local.String())
	if err != nil {
		return nil, fmt.Errorf("rewriting the pattern: %w", err)
	}
	m := &lineMatcher{re: re}
	if set, ok := finiteSet(local); ok {
		switch {
		case len(set) == 0:
			m.never = true
			return m, nil
		case !slices.Contains(set, ""):
			m.exact = true
			for _, s := range set {
				m.probes = append(m.probes, exactProbe(s))
			}
			return m, nil
		}
	}
	if lits, ok := literals(local); ok && len(lits) <= maxLiterals {
		m.exact = true
		m.probes = probesFor(lits)
		return m, nil
	}
	lits, ok := required(local)
	if ok && len(lits) == 0 {
		m.never = true
		return m, nil
	}
	// The probes or the start bytes, whichever costs less: a candidate
	// costs a regexp run on its line, and the start bytes are looked for
	// a byte at a time, where bytes.IndexByte is many times faster (the
	// 640 is a byte-at-a-time scan in byteCost's units, with a candidate
	// line taken as 300 ns).
	var set [256]bool
	if !canBeEmpty(local) && firstBytes(local, &set) {
		n, c := 0, 0
		for b, in := range set {
			if in {
				n++
				c += byteCost(byte(b))
			}
		}
		if n <= maxStartBytes && (!ok || c+640 < cost(lits)) {
			m.starts = &set
			return m, nil
		}
	}
	if ok {
		m.probes = probesFor(lits)
	}
	return m, nil
}

// maxStartBytes is the most bytes a match may start with for the
// start-byte filter to be used: with more, most lines hold one.
const maxStartBytes = 64

// firstBytes adds to set every first byte of a non-empty match of re and
// reports whether it could tell (classes beyond ASCII add every UTF-8
// lead byte).
func firstBytes(re *syntax.Regexp, set *[256]bool) bool {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true
		}
		r := re.Rune[0]
		addRuneStart(set, r)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				addRuneStart(set, f)
			}
		}
		return true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for r := lo; r <= min(hi, utf8.RuneSelf-1); r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				for b := 0xc0; b < 0x100; b++ {
					set[b] = true
				}
			}
		}
		return true
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return firstBytes(re.Sub[0], set)
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !firstBytes(sub, set) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !firstBytes(sub, set) {
				return false
			}
			if !canBeEmpty(sub) {
				break
			}
		}
		return true
	}
	return false // any character
}

// addRuneStart adds the first byte of r's UTF-8 form.
func addRuneStart(set *[256]bool, r rune) {
	var b [utf8.UTFMax]byte
	utf8.EncodeRune(b[:], r)
	set[b[0]] = true
}

// canBeEmpty reports whether re matches an empty string (in some
// context: assertions count as empty).
func canBeEmpty(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return canBeEmpty(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || canBeEmpty(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !canBeEmpty(sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return slices.ContainsFunc(re.Sub, canBeEmpty)
	}
	return true // star, quest, empty match, assertions
}

// literals returns the literals re is an alternation of, if it is one
// and each is case-sensitive or folds in ASCII only (see asciiFold).
func literals(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		l := literal{s: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0 && slices.ContainsFunc(re.Rune, folds)}
		return []literal{l}, !l.fold || asciiFold(l.s)
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			lits, ok := literals(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, true
	}
	return nil, false
}

// asciiFold reports whether every case-folded form of s is s in another
// ASCII case: s is ASCII and has no k or s (the Kelvin and long s signs
// are their other cases).
func asciiFold(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !asciiOrbit(rune(s[i])) {
			return false
		}
	}
	return true
}

// withinLines rewrites re (in place) so that no match crosses a "\n".
func withinLines(re *syntax.Regexp) *syntax.Regexp {
	for i, sub := range re.Sub {
		re.Sub[i] = withinLines(sub)
	}
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, '\n') {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
	case syntax.OpCharClass:
		var r []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					r = append(r, lo, '\n'-1)
				}
				if hi > '\n' {
					r = append(r, '\n'+1, hi)
				}
				continue
			}
			r = append(r, lo, hi)
		}
		if len(r) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
		re.Rune = r
	}
	return re
}

// finiteSet returns the strings re matches if they are at most
// maxLiterals case-sensitive strings (an empty set: re matches nothing).
func finiteSet(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return nil, true
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 && slices.ContainsFunc(re.Rune, folds) {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(set) == maxLiterals {
					return nil, false
				}
				set = append(set, string(r))
			}
		}
		return set, true
	case syntax.OpCapture:
		return finiteSet(re.Sub[0])
	case syntax.OpQuest:
		set, ok := finiteSet(re.Sub[0])
		return addString(set, ""), ok && len(set) < maxLiterals
	case syntax.OpAlternate:
		var set []string
		for _, sub := range re.Sub {
			s, ok := finiteSet(sub)
			if !ok {
				return nil, false
			}
			for _, x := range s {
				set = addString(set, x)
			}
			if len(set) > maxLiterals {
				return nil, false
			}
		}
		return set, true
	case syntax.OpConcat:
		set := []string{""}
		for _, sub := range re.Sub {
			s, ok := finiteSet(sub)
			if !ok || len(set)*len(s) > maxLiterals {
				return nil, false
			}
			var next []string
			for _, a := range set {
				for _, b := range s {
					next = addString(next, a+b)
				}
			}
			set = next
		}
		return set, true
	}
	return nil, false
}

func addString(set []string, s string) []string {
	if slices.Contains(set, s) {
		return set
	}
	return append(set, s)
}

// folds reports whether r has other cases.
func folds(r rune) bool { return unicode.SimpleFold(r) != r }

// literal is one string a match must contain; fold: in any case.
type literal struct {
	s    string
	fold bool
}

// required returns literals one of which every match of re contains,
// if it can tell (each usable as a probe). None (with ok) means that re
// matches nothing.
func required(re *syntax.Regexp) (lits []literal, ok bool) {
	if set, ok := finiteSet(re); ok {
		if slices.Contains(set, "") {
			return nil, false
		}
		lits := make([]literal, len(set))
		for i, s := range set {
			lits[i] = literal{s: s}
		}
		return lits, true
	}
	switch re.Op {
	case syntax.OpLiteral:
		l := literal{s: string(re.Rune), fold: true}
		if _, ok := foldByte(l.s); !ok {
			return nil, false
		}
		return []literal{l}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			lits, ok := required(sub)
			if !ok || len(all)+len(lits) > maxLiterals {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, true
	case syntax.OpConcat:
		var best []literal
		found, bestCost := false, 0
		for _, sub := range re.Sub {
			lits, ok := required(sub)
			if !ok {
				continue
			}
			if c := cost(lits); !found || c < bestCost {
				best, bestCost, found = lits, c, true
			}
		}
		return best, found
	}
	return nil, false
}

// cost estimates how many candidates lits find in ordinary text: the
// sum of their probe bytes' frequencies (a byte's rank in byteRank
// stands for a frequency doubling every 16 ranks).
func cost(lits []literal) int {
	c := 0
	for _, p := range probesFor(lits) {
		c += byteCost(p.b)
	}
	return c
}

// byteCost stands for how often b occurs (see cost).
func byteCost(b byte) int { return 1 << (byteRank[b] / 16) }

func probesFor(lits []literal) []probe {
	var ps []probe
	for _, l := range lits {
		if !l.fold {
			ps = append(ps, exactProbe(l.s))
			continue
		}
		b, _ := foldByte(l.s)
		p := probe{b: b}
		if asciiFold(l.s) {
			p = probe{b: b, lit: []byte(strings.ToLower(l.s)), off: strings.IndexByte(strings.ToLower(l.s), lower(b)), fold: true}
		}
		ps = append(ps, p)
		if o := otherCase(b); o != b {
			p.b = o
			ps = append(ps, p)
		}
	}
	return ps
}

// exactProbe finds s by its rarest byte.
func exactProbe(s string) probe {
	best := 0
	for i := 1; i < len(s); i++ {
		if byteRank[s[i]] < byteRank[s[best]] {
			best = i
		}
	}
	return probe{b: s[best], lit: []byte(s), off: best}
}

// foldByte is the rarest byte of s that finds every case-folded form of
// s: an ASCII character all of whose cases are ASCII (not k or s, which
// have the Kelvin and long s signs).
func foldByte(s string) (byte, bool) {
	var best byte
	ok := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || !asciiOrbit(rune(c)) {
			continue
		}
		if !ok || foldRank(c) < foldRank(best) {
			best, ok = c, true
		}
	}
	return best, ok
}

// asciiOrbit reports whether every case of r is ASCII.
func asciiOrbit(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b - 'A' + 'a'
	}
	return b
}

// equalFold reports whether text is lit (in lower case) in any ASCII
// case.
func equalFold(text, lit []byte) bool {
	for i, c := range text {
		if lower(c) != lit[i] {
			return false
		}
	}
	return true
}

func otherCase(b byte) byte {
	switch {
	case 'a' <= b && b <= 'z':
		return b - 'a' + 'A'
	case 'A' <= b && b <= 'Z':
		return b - 'A' + 'a'
	}
	return b
}

// foldRank ranks a byte found in either case by the commoner case.
func foldRank(b byte) uint8 { return max(byteRank[b], byteRank[otherCase(b)]) }

// matchLines calls yield with the 1-based number and text (without "\n")
// of each line of data that matches, in order, at most limit of them.
func (m *lineMatcher) matchLines(data []byte, limit int, yield func(n int, line []byte)) {
	if m.never || limit <= 0 {
		return
	}
	if len(m.probes) > 0 {
		m.probeLines(data, limit, yield)
		return
	}
	if m.starts != nil {
		m.startLines(data, limit, yield)
		return
	}
	found, n := 0, 1 // n: the number of the line starting at pos
	for pos := 0; pos < len(data) && found < limit; {
		loc := m.re.FindIndex(data[pos:])
		if loc == nil {
			return
		}
		at := pos + loc[0]
		start := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		if start == len(data) {
			return // an empty match after the final "\n": no line
		}
		end := lineEnd(data, at)
		n += bytes.Count(data[pos:start], []byte{'\n'})
		yield(n, data[start:end])
		found++
		pos, n = end+1, n+1
	}
}

// probeLines is matchLines through the probes.
func (m *lineMatcher) probeLines(data []byte, limit int, yield func(n int, line []byte)) {
	var small [8]int
	next := small[:0]
	if len(m.probes) > len(small) {
		next = make([]int, 0, len(m.probes))
	}
	for range m.probes {
		next = append(next, -1) // -1: not looked for yet; len(data)+1: none left
	}
	found, n := 0, 1 // n: the number of the line starting at pos
	for pos := 0; pos < len(data) && found < limit; {
		at := len(data) + 1
		for i := range m.probes {
			if next[i] < pos {
				next[i] = m.probes[i].find(data, pos)
			}
			at = min(at, next[i])
		}
		if at > len(data) {
			return
		}
		start := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		end := lineEnd(data, at)
		if m.exact || m.re.Match(data[start:end]) {
			n += bytes.Count(data[pos:start], []byte{'\n'})
			yield(n, data[start:end])
			found++
			pos, n = end+1, n+1
			continue
		}
		n += bytes.Count(data[pos:end], []byte{'\n'}) + 1
		pos = end + 1
	}
}

// startLines is matchLines through the start bytes: the regexp runs on
// the lines that hold one.
func (m *lineMatcher) startLines(data []byte, limit int, yield func(n int, line []byte)) {
	found, n := 0, 1 // n: the number of the line starting at pos
	for pos := 0; pos < len(data) && found < limit; {
		at := pos
		for at < len(data) && !m.starts[data[at]] {
			at++
		}
		if at == len(data) {
			return
		}
		start := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		end := lineEnd(data, at)
		n += bytes.Count(data[pos:start], []byte{'\n'})
		if m.re.Match(data[start:end]) {
			yield(n, data[start:end])
			found++
		}
		pos, n = end+1, n+1
	}
}

// find returns the first place at or after pos where p's literal starts
// (a case-sensitive probe) or its byte is (a folded one), or len(data)+1.
func (p *probe) find(data []byte, pos int) int {
	for from := pos + p.off; from < len(data); {
		i := bytes.IndexByte(data[from:], p.b)
		if i < 0 {
			break
		}
		at := from + i - p.off
		switch {
		case p.lit == nil:
			return at
		case at+len(p.lit) > len(data):
		case p.fold && equalFold(data[at:at+len(p.lit)], p.lit), !p.fold && bytes.Equal(data[at:at+len(p.lit)], p.lit):
			return at
		}
		from += i + 1
	}
	return len(data) + 1
}

// lineEnd is the index of the "\n" ending the line that holds data[at],
// or len(data).
func lineEnd(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// byteRank orders bytes by how often they occur in source code and
// prose, 0 the rarest and 255 the commonest (' '). It was counted once
// over Go's source tree, Python's standard library, JavaScript and
// TypeScript packages with their Markdown, and the common licence texts,
// each weighted equally; only the order matters.
var byteRank = [256]uint8{
	0, 1, 2, 3, 4, 5, 6, 7, 8, 229, 246, 9, 75, 60, 10, 11, // 0x00
	12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, // 0x10
	255, 173, 225, 202, 154, 166, 175, 220, 230, 231, 201, 171, 236, 215, 237, 227, // 0x20
	234, 211, 203, 198, 197, 187, 193, 181, 191, 184, 223, 189, 170, 224, 180, 162, // 0x30
	159, 217, 190, 210, 200, 218, 194, 185, 183, 212, 158, 167, 209, 192, 205, 204, // 0x40
	199, 169, 208, 213, 219, 188, 179, 178, 168, 176, 156, 196, 182, 195, 152, 221, // 0x50
	214, 247, 232, 244, 243, 254, 239, 235, 242, 251, 186, 216, 245, 238, 250, 252, // 0x60
	240, 177, 249, 248, 253, 241, 222, 226, 228, 233, 172, 207, 174, 206, 81, 49, // 0x70
	155, 122, 143, 129, 115, 135, 133, 119, 141, 134, 121, 116, 125, 105, 104, 114, // 0x80
	102, 106, 117, 103, 153, 146, 138, 110, 124, 151, 109, 113, 148, 142, 108, 99, // 0x90
	140, 127, 112, 131, 147, 136, 123, 120, 128, 111, 89, 96, 95, 93, 97, 90, // 0xa0
	98, 94, 107, 92, 100, 87, 88, 101, 145, 144, 137, 139, 132, 150, 118, 149, // 0xb0
	28, 29, 126, 130, 71, 74, 58, 61, 50, 57, 54, 66, 64, 53, 77, 68, // 0xc0
	79, 70, 62, 52, 51, 63, 59, 67, 72, 69, 55, 56, 48, 44, 46, 47, // 0xd0
	82, 73, 157, 78, 86, 164, 165, 163, 161, 160, 76, 84, 91, 80, 65, 83, // 0xe0
	85, 30, 31, 32, 45, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, // 0xf0
}
