package markdown

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCodeShowsItsTextAsItIsInMarkdown(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"git status", "`git status`"},
		{"rm *.tmp _x_ [a](b) <!-- y --> \\*", "`rm *.tmp _x_ [a](b) <!-- y --> \\*`"},
		{"echo `date` && echo ``x``", "``` echo `date` && echo ``x`` ```"},
		// A span's content next to a backtick, or with a space at both
		// ends, is padded: CommonMark takes one space off each end.
		{"`cmd`", "`` `cmd` ``"},
		{" x ", "`  x  `"},
		{" x", "` x`"},
		{"   ", "`   `"},
		{"__init__.py", "`__init__.py`"},
	} {
		assert.Equal(t, tt.want, Code(tt.in), "%q", tt.in)
	}
}

func TestCodeBlockHoldsAnyFenceInside(t *testing.T) {
	for _, in := range []string{"plain\n", "```\ninside\n```", "a ```` b", ""} {
		out := CodeBlock(in)
		first, rest, _ := strings.Cut(out, "\n")
		inner, last := rest[:strings.LastIndex(rest, "\n")], rest[strings.LastIndex(rest, "\n")+1:]
		assert.Equal(t, first, last, "%q", in)
		assert.GreaterOrEqual(t, len(first), 3)
		assert.NotContains(t, inner, first, "no run inside as long as the fence: %q", in)
		assert.Equal(t, strings.TrimSuffix(in, "\n"), inner)
	}
}

func TestCodeBlockTextIsWhatTheBlockHolds(t *testing.T) {
	for _, in := range []string{"plain\n", "```\ninside\n```", "a ```` b", "", "two\nlines"} {
		got, ok := CodeBlockText(CodeBlock(in))
		assert.True(t, ok, "%q", in)
		assert.Equal(t, strings.TrimSuffix(in, "\n"), got)
	}
	for _, s := range []string{"no fence", "```\nnot closed", "``\ntoo short\n``", "```\nother close\n````"} {
		got, ok := CodeBlockText(s)
		assert.False(t, ok, "%q", s)
		assert.Equal(t, s, got)
	}
}
