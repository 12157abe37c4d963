package agent

import (
	"fmt"
	"strings"
	"unicode"
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
// \uXXXX escapes. Nothing is dropped, so what is shown stays exact.
func visibleLine(s string) string {
	clean := true
	for _, r := range s {
		if hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString("⏎")
		case hidden(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports whether r does not show as itself on one line.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}
