package unidiff

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// applyUnified applies a diff made by unifiedDiff to old and returns the
// result, so a diff can be checked by what it does.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	a := splitLines(old)
	var out []line
	pos := 0
	last := byte(0)
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			var start int
			spec := strings.Fields(l)[1][1:]
			n, _ := strings.CutPrefix(spec, "")
			startStr, count, _ := strings.Cut(n, ",")
			start = atoi(t, startStr)
			if count == "0" {
				start++ // "-N,0" names the line before
			}
			for pos < start-1 {
				out = append(out, a[pos])
				pos++
			}
		case strings.HasPrefix(l, " "), strings.HasPrefix(l, "-"):
			require.Less(t, pos, len(a), "diff past the end:\n%s", diff)
			require.Equal(t, l[1:], a[pos].text, "context or removed line %d of the diff:\n%s", i, diff)
			if l[0] == ' ' {
				out = append(out, a[pos])
			}
			pos++
		case strings.HasPrefix(l, "+"):
			out = append(out, line{text: l[1:]})
		case l == `\ No newline at end of file`:
			if last != '-' { // after a removed line it is the old file's
				out[len(out)-1].noEOL = true
			}
		}
		if l != "" {
			last = l[0]
		}
	}
	out = append(out, a[pos:]...)
	var b strings.Builder
	for _, l := range out {
		b.WriteString(l.text)
		if !l.noEOL {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func atoi(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', "%q", s)
		n = n*10 + int(c-'0')
	}
	return n
}

func TestUnifiedDiffTurnsOldIntoNew(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d", "e"}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte('\n')
		}
		s := b.String()
		if rng.IntN(4) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		return s
	}
	for i := range 2000 {
		old, new := gen(), gen()
		d := Unified("f", old, new, false)
		if old == new {
			assert.Empty(t, d)
			continue
		}
		require.Equal(t, new, applyUnified(t, old, d), "case %d\nold %q\nnew %q\n%s", i, old, new, d)
	}
}

// The diffs match diff -u's where both are minimal and unambiguous.
func TestUnifiedDiffMatchesDiffU(t *testing.T) {
	diffBin, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff here")
	}
	cases := [][2]string{
		{"one\ntwo\nthree\n", "one\nTWO\nthree\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\nY\n12\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"},
		{"a\nb\n", "a\nb"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "old"), []byte(c[0]), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "new"), []byte(c[1]), 0o600))
		out, _ := exec.Command(diffBin, "-u", filepath.Join(dir, "old"), filepath.Join(dir, "new")).Output()
		want := string(out)
		want = want[strings.Index(want, "\n@@")+1:]
		got := Unified("f", c[0], c[1], false)
		got = got[strings.Index(got, "\n@@")+1:]
		assert.Equal(t, want, got, "%q -> %q", c[0], c[1])
	}
}
