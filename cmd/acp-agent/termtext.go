package main

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// terminalText is a writer for text a person reads in a terminal that
// holds what the model and the workspace control (exec's rendering): a
// control character (ESC and so every escape sequence, C1's CSI, BEL,
// a lone CR, DEL, NUL) or an invisible format character (bidi overrides
// and isolates, zero-width spaces; the zero-width joiner of emoji is
// kept) is written as U+FFFD, so the text cannot set the clipboard
// (OSC 52), retitle the window, move the cursor over what was printed or
// reorder a line. Newlines and tabs pass, and CRLF is written LF. Each
// Write is taken as whole runes (fmt writes a formatted line at once);
// invalid UTF-8 becomes U+FFFD as well.
type terminalText struct{ w io.Writer }

func (t terminalText) Write(p []byte) (int, error) {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == '\r' && i+1 < len(p) && p[i+1] == '\n':
		case r == '\n' || r == '\t' || r == '\u200d':
			b.WriteRune(r)
		case r == utf8.RuneError && n <= 1, unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			b.WriteRune(utf8.RuneError)
		default:
			b.Write(p[i : i+n])
		}
		i += n
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
