package markdown

import "strings"

// CodeBlock puts text in a Markdown code fence longer than any run of
// backticks inside it, so that a client rendering it as Markdown (ACP
// says clients should) shows it as it is: no `#` line made a heading, no
// `__init__.py` made bold, no HTML tag dropped, no image fetched, and no
// fence inside the text that ends the block early.
func CodeBlock(text string) string {
	fence := strings.Repeat("`", max(3, longestBackticks(text)+1))
	return fence + "\n" + strings.TrimSuffix(text, "\n") + "\n" + fence
}

// Code is s as a Markdown code span: shown as it is, where a client
// renders a title as Markdown (Zed does, the permission question
// included), by a delimiter longer than any run of backticks in s. A
// command's `*` globs, `\` escapes, backtick substitutions, `[x](y)` and
// `<!-- -->` would otherwise be read as emphasis, escapes, code, a link
// and a hidden comment, so that the user approved a command other than
// the one that runs. Tool titles put the model's operands (commands,
// paths, URLs, patterns) in one.
func Code(s string) string {
	delim := strings.Repeat("`", longestBackticks(s)+1)
	// A span's content loses one space at each end when it has one at
	// both; one next to the delimiter would merge with it.
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.Trim(s, " ") != "" {
		s = " " + s + " "
	}
	return delim + s + delim
}

// CodeBlockText is the text a code block made by CodeBlock holds, and
// true; for any other text, the text itself and false. A client that
// shows text on a terminal, not as Markdown, shows a block's text so.
func CodeBlockText(s string) (string, bool) {
	fence, rest, ok := strings.Cut(s, "\n")
	if !ok || len(fence) < 3 || strings.Trim(fence, "`") != "" || !strings.HasSuffix(rest, "\n"+fence) && rest != fence {
		return s, false
	}
	return strings.TrimSuffix(strings.TrimSuffix(rest, fence), "\n"), true
}

// longestBackticks is the length of the longest run of backticks in s.
func longestBackticks(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
