package tools

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplaceTextFindsTheOldTextTheWayModelsWriteIt(t *testing.T) {
	for _, tc := range []struct {
		name, content, old, new string
		all                     bool
		want                    string
		level                   matchLevel
		unnumbered              bool
		err                     error
	}{
		{name: "exact", content: "a\nb\nc\n", old: "b", new: "B", want: "a\nB\nc\n"},
		{name: "exact wins over loose", content: "x \nx\n", old: "x\n", new: "y\n", want: "x \ny\n"},
		{name: "LF text in a CRLF file keeps CRLF", content: "one\r\ntwo\r\nthree\r\n", old: "one\ntwo\n", new: "1\n2\n",
			want: "1\r\n2\r\nthree\r\n"},
		{name: "CRLF text in an LF file", content: "one\ntwo\n", old: "one\r\ntwo", new: "1\r\n2", want: "1\n2\n"},
		{name: "trailing whitespace", content: "func a() {  \n\treturn\n}\n", old: "func a() {\n\treturn", new: "func b() {\n\treturn",
			want: "func b() {\n\treturn\n}\n", level: matchTrailingSpace},
		{name: "indentation: the file's kept, nesting mapped", content: "f {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			old: "if x {\n    return 1\n}", new: "if x {\n    return 2\n}\nnext()",
			want: "f {\n\tif x {\n\t\treturn 2\n\t}\n\tnext()\n}\n", level: matchIndentation},
		{name: "unicode punctuation", content: "msg := \u201chello \u2014 world\u201d\n", old: `msg := "hello - world"`, new: `msg := "hi"`,
			want: "msg := \"hi\"\n", level: matchUnicode},
		{name: "line numbers copied from read_file", content: "a\nb\nc\n", old: "     2\tb\n     3\tc", new: "     2\tB\n     3\tC",
			want: "a\nB\nC\n", unnumbered: true},
		{name: "ambiguous exact", content: "x\nx\n", old: "x", new: "y", err: errAmbiguous},
		{name: "replace all exact", content: "x\nx\n", old: "x", new: "y", all: true, want: "y\ny\n"},
		{name: "ambiguous loose is never guessed", content: "\tx()\n  x()\n", old: "x() ", new: "y()", err: errAmbiguous},
		{name: "replace all loose", content: "\tx()\n  x()\n", old: "x() ", new: "y()", all: true, want: "\ty()\n  y()\n", level: matchIndentation},
		{name: "not found", content: "a\n", old: "zzz", new: "y", err: errNoMatch},
		{name: "blank old text is never matched loosely", content: "a\n\n", old: "  \n", new: "y", err: errNoMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := replaceText(tc.content, tc.old, tc.new, tc.all)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, out.content)
			assert.Equal(t, tc.level, out.level)
			assert.Equal(t, tc.unnumbered, out.unnumbered)
		})
	}
}

func TestApplyHunksPlacesLooselyButUniquely(t *testing.T) {
	patch := func(body string) []hunk {
		files, err := parsePatch("*** Begin Patch\n*** Update File: a\n" + body + "\n*** End Patch")
		require.NoError(t, err)
		return files[0].hunks
	}
	out, notes, err := applyHunks("alpha  \nbeta\ngamma\n", patch(" alpha\n-beta\n+BETA\n gamma"), "a")
	require.NoError(t, err)
	assert.Equal(t, "alpha  \nBETA\ngamma\n", out, "context lines keep the file's text")
	assert.Equal(t, []string{"a: hunk 1 was placed ignoring trailing whitespace"}, notes)

	out, _, err = applyHunks("f {\r\n\tg()\r\n}\r\n", patch(" f {\n-    g()\n+    h()\n }"), "a")
	require.NoError(t, err)
	assert.Equal(t, "f {\r\n\th()\r\n}\r\n", out, "CRLF kept, indentation mapped")

	_, _, err = applyHunks("\tx\n  x\n", patch("-x\n+y"), "a")
	assert.ErrorContains(t, err, "occur 2 times when ignoring indentation")
}

// An edit's result is bounded whichever way its text was found (exactly,
// or loosely: here ignoring the trailing space the model added): past the
// size cap it is refused before it is built.
func TestReplaceTextRefusesAResultPastTheSizeCap(t *testing.T) {
	for _, tc := range []struct{ name, content, old string }{
		{"exact", strings.Repeat("  a\n", 1_000_000), "a"},
		{"loose", strings.Repeat("  a\n", 1_000_000), "a "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := replaceText(tc.content, tc.old, strings.Repeat("b", 100), true)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the edited file would pass")
			out, err := replaceText(tc.content, tc.old, "b", true)
			require.NoError(t, err, "a result within the cap")
			assert.Equal(t, 1_000_000, out.count)
		})
	}
}

// findLines finds what the naive scan finds (leftmost, without overlaps),
// on random lines over a small alphabet where near-matches abound.
func TestFindLinesMatchesTheNaiveScan(t *testing.T) {
	naive := func(lines, pat []string, from int, level matchLevel) []int {
		var out []int
		for i := from; i+len(pat) <= len(lines); i++ {
			ok := true
			for j, p := range pat {
				if !level.equal(strings.TrimSuffix(lines[i+j], "\n"), p) {
					ok = false
					break
				}
			}
			if ok {
				out = append(out, i)
				i += len(pat) - 1
			}
		}
		return out
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a\n", " a\n", "a \n", "b\n", "\u2013\n", "-\n"}
	for range 20000 {
		lines := make([]string, r.IntN(12))
		for i := range lines {
			lines[i] = alphabet[r.IntN(len(alphabet))]
		}
		pat := make([]string, 1+r.IntN(4))
		for i := range pat {
			pat[i] = strings.TrimSuffix(alphabet[r.IntN(len(alphabet))], "\n")
		}
		from := r.IntN(len(lines) + 1)
		for _, level := range append([]matchLevel{matchExact}, loose...) {
			require.Equal(t, naive(lines, pat, from, level), findLines(lines, pat, from, level), "%q in %q from %d at %v", pat, lines, from, level)
		}
	}
}
