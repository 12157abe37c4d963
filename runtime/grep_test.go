//go:build unix

package runtime

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// grepLine is a match as the tests compare them.
type grepLine struct {
	Rel  string
	Line int
	Text string
}

func grepLines(t *testing.T, root string, got []GrepMatch) []grepLine {
	t.Helper()
	out := []grepLine{}
	for _, g := range got {
		rel, err := filepath.Rel(root, g.Path)
		require.NoError(t, err)
		out = append(out, grepLine{filepath.ToSlash(rel), g.Line, g.Text})
	}
	return out
}

// wantGrep is what a sequential search gives: files in filepath.WalkDir
// order (names sorted, depth first, as Grep's walk), each file's lines
// matched one by one.
func wantGrep(t *testing.T, root, pattern string) []grepLine {
	t.Helper()
	re := regexp.MustCompile(pattern)
	out := []grepLine{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if re.MatchString(line) {
				out = append(out, grepLine{filepath.ToSlash(rel), i + 1, line})
			}
		}
		return nil
	}))
	return out
}

// orderTree writes n files over nested directories, each with a few
// matching lines; the first file in walk order is large, so that the
// worker searching it finishes after the workers given later files.
func orderTree(t *testing.T, dir string, n int) {
	t.Helper()
	big := strings.Repeat("filler line without the word\n", 40000) + "needle in the big file\n"
	writeFile(t, dir, "a/0big.txt", big)
	for i := range n {
		rel := fmt.Sprintf("d%d/e%d/f%03d.txt", i%7, i%3, i)
		var b strings.Builder
		for l := range i%5 + 1 {
			fmt.Fprintf(&b, "line %d\nneedle %d.%d\n", l, i, l)
		}
		writeFile(t, dir, rel, b.String())
	}
}

// Matches come in walk order whatever order the workers finish in: the
// same list as a sequential search, run after run, with more workers
// than files per batch would need.
func TestGrepOrderIsTheWalkOrder(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("s")
	orderTree(t, dir, 300)
	want := wantGrep(t, dir, "needle")
	require.Greater(t, len(want), 3*grepBatchLen)
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(4))
	for range 5 {
		got, truncated, err := tr.fs.Grep(context.Background(), dir, GrepOptions{Pattern: "needle", MaxMatches: 100000})
		require.NoError(t, err)
		require.False(t, truncated)
		require.Equal(t, want, grepLines(t, dir, got))
	}
}

// The cap keeps the first matches in walk order, whichever batch or
// file it falls in; truncated says whether there were more. With
// FilesOnly it counts files, each with its first match.
func TestGrepCapKeepsTheFirstMatchesInWalkOrder(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("s")
	orderTree(t, dir, 120)
	want := wantGrep(t, dir, "needle")
	var wantFiles []grepLine
	for _, w := range want {
		if len(wantFiles) == 0 || wantFiles[len(wantFiles)-1].Rel != w.Rel {
			wantFiles = append(wantFiles, w)
		}
	}
	for _, limit := range []int{1, 2, grepBatchLen - 1, grepBatchLen, grepBatchLen + 1, 100, len(wantFiles), len(want) - 1, len(want), len(want) + 1} {
		got, truncated, err := tr.fs.Grep(context.Background(), dir, GrepOptions{Pattern: "needle", MaxMatches: limit})
		require.NoError(t, err)
		require.Equal(t, want[:min(limit, len(want))], grepLines(t, dir, got), "cap %d", limit)
		require.Equal(t, limit < len(want), truncated, "cap %d", limit)
		got, truncated, err = tr.fs.Grep(context.Background(), dir, GrepOptions{Pattern: "needle", MaxMatches: limit, FilesOnly: true})
		require.NoError(t, err)
		require.Equal(t, wantFiles[:min(limit, len(wantFiles))], grepLines(t, dir, got), "files-only cap %d", limit)
		require.Equal(t, limit < len(wantFiles), truncated, "files-only cap %d", limit)
	}
}

// A search that reaches its cap stops walking: here the walk of the
// whole tree would see its context cancelled (countdownCtx turns to
// Canceled after a number of checks a full walk passes), while a search
// capped at one match ends long before, without error.
func TestGrepStopsWalkingAtTheCap(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("s")
	for i := range 3000 {
		writeFile(t, dir, fmt.Sprintf("d%02d/f%04d.txt", i/100, i), "needle\n")
	}
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(2))
	full := &countdownCtx{Context: context.Background()}
	full.n.Store(3000)
	_, _, err := tr.fs.Grep(full, dir, GrepOptions{Pattern: "needle", MaxMatches: 100000})
	require.ErrorIs(t, err, context.Canceled, "a full walk checks its context more than 3000 times")
	capped := &countdownCtx{Context: context.Background()}
	capped.n.Store(3000)
	got, truncated, err := tr.fs.Grep(capped, dir, GrepOptions{Pattern: "needle", MaxMatches: 1})
	require.NoError(t, err)
	require.True(t, truncated)
	require.Equal(t, []grepLine{{"d00/f0000.txt", 1, "needle"}}, grepLines(t, dir, got))
	require.Positive(t, capped.n.Load(), "the capped search checked its context fewer than 3000 times")
}

// A walk skips what ReadTextFile refuses: a NUL in the first 8 KiB
// (binary), invalid UTF-8, and, as ReadTextFile, takes a NUL further in
// as text.
func TestGrepSkipsBinaryAndNonUTF8Files(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("s")
	writeFile(t, dir, "bin.dat", "needle\x00\x01\x02\n")
	writeFile(t, dir, "bin-late.dat", strings.Repeat("x", binarySniffLen-1)+"\x00\nneedle\n")
	writeFile(t, dir, "latin1.txt", "caf\xe9 needle\n")
	writeFile(t, dir, "nul-after-sniff.txt", strings.Repeat("x\n", binarySniffLen)+"\x00\nneedle\n")
	writeFile(t, dir, "text.txt", "a needle\n")
	// Larger than a first read (sniffReadLen): a binary one is skipped
	// on its start; a text one is searched whole, across the two reads
	// (a needle cut in two by them), and a NUL after the first 8 KiB
	// but within the first read does not make it binary.
	writeFile(t, dir, "z-bin-big.dat", "\x00"+strings.Repeat("needle\n", 3*sniffReadLen/7))
	head := "needle first\n" + strings.Repeat("x\n", binarySniffLen) + "\x00\n"
	fill := (sniffReadLen - 3 - len(head)) / 2 // "needle cut" starts 3 bytes before the cut
	head += strings.Repeat("x\n", fill)
	require.Equal(t, sniffReadLen-3, len(head))
	writeFile(t, dir, "z-text-big.txt", head+"needle cut\n"+strings.Repeat("y\n", sniffReadLen)+"needle last\n")
	got, _, err := tr.fs.Grep(context.Background(), dir, GrepOptions{Pattern: "needle"})
	require.NoError(t, err)
	cutLine := binarySniffLen + 2 + fill + 1
	require.Equal(t, []grepLine{{"nul-after-sniff.txt", binarySniffLen + 2, "needle"}, {"text.txt", 1, "a needle"},
		{"z-text-big.txt", 1, "needle first"}, {"z-text-big.txt", cutLine, "needle cut"},
		{"z-text-big.txt", cutLine + sniffReadLen + 1, "needle last"}}, grepLines(t, dir, got))
}

// Long lines: a match's text is cut to 300 bytes on a rune boundary
// however long its line, lines after a long one keep their numbers, a
// last line without "\n" and a "\r" before "\n" are lines as grep sees
// them.
func TestGrepLongLines(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("s")
	long := "x" + strings.Repeat("é", 1<<20) + " needle at the end"
	writeFile(t, dir, "a-minified.js", "first\n"+long+"\nneedle after\n"+strings.Repeat("y", 5000)+"needle")
	writeFile(t, dir, "b-crlf.txt", "x\r\nneedle\r\n")
	got, _, err := tr.fs.Grep(context.Background(), dir, GrepOptions{Pattern: "needle"})
	require.NoError(t, err)
	require.Equal(t, []grepLine{
		{"a-minified.js", 2, "x" + strings.Repeat("é", 149)}, // 299 bytes: the 300th is inside an é
		{"a-minified.js", 3, "needle after"},
		{"a-minified.js", 4, strings.Repeat("y", 300)},
		{"b-crlf.txt", 2, "needle\r"},
	}, grepLines(t, dir, got))
}

// The regexp features the grep tool documents (RE2: alternation,
// classes, anchors, word boundaries, repetition) and case-insensitive
// search with Unicode case folding: the Kelvin sign is a K, the long s
// an s, final sigma a sigma.
func TestGrepPatternFeatures(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("s")
	writeFile(t, dir, "a.go", "package a\n\nfunc NewReader() {}\nfunc NewWriter() {}\n// NewReaderSize\nvar x = 42\nfuncs := 1\n")
	writeFile(t, dir, "b.txt", "\u212aelvin\nKELVIN\nkelvin\nclass\ncla\u017f\u017f\n\u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3\n\u1f40\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2\n")
	tests := []struct {
		pattern    string
		ignoreCase bool
		want       []string // rel:line
	}{
		{pattern: "NewReader|NewWriter", want: []string{"a.go:3", "a.go:4", "a.go:5"}},
		{pattern: `^func New(Reader|Writer)\(\)`, want: []string{"a.go:3", "a.go:4"}},
		{pattern: `\bNewReader\b`, want: []string{"a.go:3"}},
		{pattern: `[0-9]{2}$`, want: []string{"a.go:6"}},
		{pattern: `^func\b`, want: []string{"a.go:3", "a.go:4"}},
		{pattern: `^$`, want: []string{"a.go:2"}},
		{pattern: "kelvin", want: []string{"b.txt:3"}},
		{pattern: "kelvin", ignoreCase: true, want: []string{"b.txt:1", "b.txt:2", "b.txt:3"}},
		{pattern: "CLASS", ignoreCase: true, want: []string{"b.txt:4", "b.txt:5"}},
		{pattern: "(?i)class", want: []string{"b.txt:4", "b.txt:5"}},
		{pattern: "\u03c3\u03c3", ignoreCase: true, want: []string{"b.txt:6", "b.txt:7"}},
		{pattern: "\u03c2$", ignoreCase: true, want: []string{"b.txt:6", "b.txt:7"}},
		{pattern: `a\nb`},
	}
	for _, tt := range tests {
		got, _, err := tr.fs.Grep(context.Background(), dir, GrepOptions{Pattern: tt.pattern, IgnoreCase: tt.ignoreCase})
		require.NoError(t, err, tt.pattern)
		var lines []string
		for _, g := range grepLines(t, dir, got) {
			lines = append(lines, fmt.Sprintf("%s:%d", g.Rel, g.Line))
		}
		require.Equal(t, tt.want, lines, "%q ignoreCase=%v", tt.pattern, tt.ignoreCase)
	}
}
