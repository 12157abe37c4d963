package tools

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/runtime"
)

// How the edit tools find the text to replace. Models copy text from
// read_file's numbered output, retype it with the wrong trailing spaces
// or indentation, or with ASCII quotes where the file has typographic
// ones; a file may end its lines with CRLF while the model writes LF.
// Exact matching first, then each looser way in turn (the order codex's
// apply-patch seek_sequence uses), and a match must always be unique at
// the first level that finds any: a loose match never picks one of
// several places.

// matchLevel is how loosely a text was found.
type matchLevel int

const (
	matchExact matchLevel = iota
	matchTrailingSpace
	matchIndentation
	matchUnicode
)

// loose are the fallback levels, in order.
var loose = []matchLevel{matchTrailingSpace, matchIndentation, matchUnicode}

// String says how a loose match was made, for the result the model reads.
func (l matchLevel) String() string {
	switch l {
	case matchTrailingSpace:
		return "ignoring trailing whitespace"
	case matchIndentation:
		return "ignoring indentation"
	case matchUnicode:
		return "ignoring indentation and normalising Unicode quotes, dashes and spaces"
	}
	return "exactly"
}

// equal compares a file line with a pattern line at level l.
func (l matchLevel) equal(line, pat string) bool { return l.key(line) == l.key(pat) }

// key is what of a line counts at level l: two lines are equal at l when
// their keys are.
func (l matchLevel) key(line string) string {
	switch l {
	case matchTrailingSpace:
		return strings.TrimRight(line, " \t\r")
	case matchIndentation:
		return strings.TrimSpace(line)
	case matchUnicode:
		return normalizePunctuation(strings.TrimSpace(line))
	}
	return line
}

// punctuation maps typographic characters to the ASCII ones models type.
var punctuation = strings.NewReplacer(
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

func normalizePunctuation(s string) string { return punctuation.Replace(s) }

// editOutcome is a replacement made in a file's text.
type editOutcome struct {
	content string
	count   int        // replacements
	line    int        // 1-based line of the first
	level   matchLevel // how the old text was found
	// unnumbered: the old text carried read_file's line-number prefixes,
	// which were taken off.
	unnumbered bool
}

// note tells the model how its old text was found, when not exactly as
// given ("" when it was).
func (o editOutcome) note() string {
	var parts []string
	if o.unnumbered {
		parts = append(parts, "the line-number prefixes of read_file's output were removed from old_string (do not copy them)")
	}
	if o.level != matchExact {
		parts = append(parts, "old_string was matched "+o.level.String()+"; check the result")
	}
	if len(parts) == 0 {
		return ""
	}
	return " Note: " + strings.Join(parts, "; ") + "."
}

// errNoMatch and errAmbiguous are the ways a replacement fails to find
// its place; the tools wrap them with what the model should do.
var (
	errNoMatch   = errors.New("not found")
	errAmbiguous = errors.New("not unique")
)

// replaceText replaces oldS with newS in content: once (oldS must be
// found exactly once at the first level that finds it) or, with all, at
// every place found at that level. Line endings: in a file whose lines
// all end in CRLF, the texts are matched and written with LF and the
// result gets CRLF back; text copied with read_file's line numbers is
// matched without them.
func replaceText(content, oldS, newS string, all bool) (editOutcome, error) {
	crlf := isCRLF(content)
	work := content
	if crlf {
		work = strings.ReplaceAll(content, "\r\n", "\n")
	}
	if crlf || !strings.Contains(content, "\r") {
		oldS, newS = strings.ReplaceAll(oldS, "\r\n", "\n"), strings.ReplaceAll(newS, "\r\n", "\n")
	}
	if oldS == newS {
		return editOutcome{}, errors.New("old_string and new_string are the same; nothing to change")
	}
	out, err := findAndReplace(work, oldS, newS, all)
	if errors.Is(err, errNoMatch) {
		if o, ok := stripLineNumbers(oldS); ok {
			n := newS
			if s, ok := stripLineNumbers(newS); ok {
				n = s
			}
			if o2, err2 := findAndReplace(work, o, n, all); err2 == nil || !errors.Is(err2, errNoMatch) {
				out, err = o2, err2
				out.unnumbered = true
			}
		}
	}
	if err != nil {
		return editOutcome{}, err
	}
	if crlf {
		out.content = strings.ReplaceAll(out.content, "\n", "\r\n")
	}
	return out, nil
}

// isCRLF reports whether every line of s ends in CRLF (and there is one).
func isCRLF(s string) bool {
	n := strings.Count(s, "\n")
	return n > 0 && strings.Count(s, "\r\n") == n
}

// numbered is read_file's line prefix: the number, right-aligned, and a
// tab.
var numbered = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *[0-9]+\t`) })

// stripLineNumbers removes read_file's prefixes from every line of s, if
// every non-empty line has one.
func stripLineNumbers(s string) (string, bool) {
	lines := strings.Split(s, "\n")
	some := false
	for i, l := range lines {
		if l == "" {
			continue
		}
		loc := numbered().FindStringIndex(l)
		if loc == nil {
			return "", false
		}
		lines[i], some = l[loc[1]:], true
	}
	return strings.Join(lines, "\n"), some
}

// maxEditedSize bounds an edit's result: past the size cap of the files
// the workspace writes, the write would be refused anyway, and a
// replace_all (or a multi_edit's chain of them) could otherwise make the
// agent build a result of terabytes.
const maxEditedSize = runtime.DefaultMaxFileSize

func errEditTooLarge(size, n, grow int) error {
	return fmt.Errorf("the edited file would pass the size limit of the files the agent writes (%d bytes): %d bytes and %d replacements each %d bytes longer; nothing was written", maxEditedSize, size, n, grow)
}

// findAndReplace is replaceText on LF text.
func findAndReplace(work, oldS, newS string, all bool) (editOutcome, error) {
	if n := strings.Count(work, oldS); n > 0 {
		if n > 1 && !all {
			return editOutcome{}, fmt.Errorf("%w: old_string occurs %d times", errAmbiguous, n)
		}
		first := strings.Index(work, oldS)
		limit, replaced := 1, 1
		if all {
			limit, replaced = -1, n
		}
		if grow := len(newS) - len(oldS); grow > 0 && replaced > (maxEditedSize-len(work))/grow {
			return editOutcome{}, errEditTooLarge(len(work), replaced, grow)
		}
		return editOutcome{content: strings.Replace(work, oldS, newS, limit), count: n,
			line: 1 + strings.Count(work[:first], "\n")}, nil
	}
	pat := strings.Split(strings.TrimSuffix(oldS, "\n"), "\n")
	if strings.TrimSpace(oldS) == "" {
		return editOutcome{}, errNoMatch // blank text matches anywhere loosely
	}
	lines := strings.SplitAfter(work, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, level := range loose {
		starts := findLines(lines, pat, 0, level)
		switch {
		case len(starts) == 0:
			continue
		case len(starts) > 1 && !all:
			return editOutcome{}, fmt.Errorf("%w: old_string matches %d places when %s", errAmbiguous, len(starts), level)
		}
		out := editOutcome{count: len(starts), line: starts[0] + 1, level: level}
		var b strings.Builder
		prev := 0
		for _, at := range starts {
			for _, l := range lines[prev:at] {
				b.WriteString(l)
			}
			region := lines[at : at+len(pat)]
			b.WriteString(replacement(region, pat, newS, level))
			prev = at + len(pat)
			if b.Len() > maxEditedSize {
				return editOutcome{}, fmt.Errorf("the edited file would pass %d bytes, the size limit of the files the agent writes; nothing was written", maxEditedSize)
			}
		}
		for _, l := range lines[prev:] {
			b.WriteString(l)
		}
		out.content = b.String()
		return out, nil
	}
	return editOutcome{}, errNoMatch
}

// findLines returns where pat occurs as whole consecutive lines of lines
// (each keeping its "\n") at or after from, at level, without overlaps,
// leftmost first. It compares each line's key once and searches with
// Knuth-Morris-Pratt: the naive scan compared up to len(lines)*len(pat)
// lines, so an old_string of 200,000 lines that almost matches
// everywhere in a file of 2,000,000 never ended.
func findLines(lines, pat []string, from int, level matchLevel) []int {
	if len(pat) == 0 || len(lines)-from < len(pat) {
		return nil
	}
	keys := make([]string, len(pat))
	for j, p := range pat {
		keys[j] = level.key(p)
	}
	// fail[j]: the length of the longest proper prefix of keys[:j+1]
	// that is also its suffix.
	fail := make([]int, len(keys))
	for j, k := 1, 0; j < len(keys); j++ {
		for k > 0 && keys[j] != keys[k] {
			k = fail[k-1]
		}
		if keys[j] == keys[k] {
			k++
		}
		fail[j] = k
	}
	var out []int
	k := 0
	for i := from; i < len(lines); i++ {
		line := level.key(strings.TrimSuffix(lines[i], "\n"))
		for k > 0 && line != keys[k] {
			k = fail[k-1]
		}
		if line == keys[k] {
			k++
		}
		if k == len(keys) {
			out = append(out, i-len(keys)+1)
			k = 0 // no overlaps: the next match starts after this one
		}
	}
	return out
}

// replacement is the text that replaces a loosely matched region of
// whole lines: newS, re-indented like the file when indentation was
// ignored, ending with a line break when the region did.
func replacement(region, pat []string, newS string, level matchLevel) string {
	if newS == "" {
		return ""
	}
	if level >= matchIndentation {
		lines := strings.Split(newS, "\n")
		reindentLines(lines, pat, region)
		newS = strings.Join(lines, "\n")
	}
	if strings.HasSuffix(region[len(region)-1], "\n") && !strings.HasSuffix(newS, "\n") {
		newS += "\n"
	}
	return newS
}

func firstNonBlank(lines []string) string {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// reindentLines gives lines written with the model's indentation the
// file's, when the old text was found ignoring indentation: each
// indentation the model used in its old lines maps to the one the file has
// on the matching line (so four spaces become two tabs where the file
// nests with tabs); a line indented some other way keeps its extra
// indentation on top of the file's for the first line.
func reindentLines(lines, pat, region []string) {
	mapped := map[string]string{}
	for i := range pat {
		if i < len(region) && strings.TrimSpace(pat[i]) != "" {
			from, to := indentOf(pat[i]), indentOf(strings.TrimRight(region[i], "\r\n"))
			if _, ok := mapped[from]; !ok {
				mapped[from] = to
			}
		}
	}
	base, baseTo := indentOf(firstNonBlank(pat)), indentOf(firstNonBlank(region))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := indentOf(l)
		switch to, ok := mapped[ind]; {
		case ok:
			lines[i] = to + l[len(ind):]
		case strings.HasPrefix(l, base):
			lines[i] = baseTo + l[len(base):]
		}
	}
}

// seekLines finds pat as consecutive lines of lines at or after from,
// for a patch hunk: the first level that finds it must find it once.
func seekLines(lines, pat []string, from int) (int, matchLevel, error) {
	for _, level := range append([]matchLevel{matchExact}, loose...) {
		starts := findLines(lines, pat, from, level)
		switch len(starts) {
		case 0:
			continue
		case 1:
			return starts[0], level, nil
		}
		return -1, level, fmt.Errorf("%w: its lines occur %d times", errAmbiguous, len(starts))
	}
	return -1, matchExact, errNoMatch
}
