package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func put(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// A subdirectory that is a symlink out of the workspace never brings its
// rules in, however a tool names a file below it; paths outside the
// workspace add nothing; each directory is looked at once.
func TestTouchStaysInsideTheWorkspace(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	put(t, filepath.Join(outside, "AGENTS.md"), "OUTSIDE")
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "link")))
	put(t, filepath.Join(ws, "a", "b", "AGENTS.md"), "AB")
	s := Load(ws, "", nil)
	assert.Empty(t, s.Touch(filepath.Join(ws, "link", "f.txt")))
	assert.Empty(t, s.Touch(filepath.Join(outside, "f.txt")))
	assert.Empty(t, s.Touch(filepath.Join(ws, "..", filepath.Base(outside), "f.txt")))
	added := s.Touch(filepath.Join(ws, "a", "b", "c", "new.txt"))
	require.Len(t, added, 1)
	assert.Equal(t, "AB", added[0].Text)
	assert.True(t, added[0].Nested)
	assert.Empty(t, s.Touch(filepath.Join(ws, "a", "b", "other.txt")), "once")
	assert.NotContains(t, s.Prompt(), "OUTSIDE")
}

// The total cap leaves whole files out, with a notice; invalid UTF-8 is
// replaced; a cut never splits a rune.
func TestCapsAndEncoding(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	put(t, filepath.Join(ws, "AGENTS.md"), strings.Repeat("é", MaxFileBytes)) // 2 bytes a rune: cut mid-file
	for _, d := range []string{"a", "b", "c", "d"} {
		put(t, filepath.Join(ws, d, "AGENTS.md"), strings.Repeat("x", MaxFileBytes-1))
	}
	put(t, filepath.Join(ws, "e", "AGENTS.md"), "bad \xff byte")
	put(t, filepath.Join(ws, "f", "AGENTS.md"), "early \xff byte "+strings.Repeat("y", MaxFileBytes))
	s := Load(ws, "", nil)
	f := s.Files()
	require.Len(t, f, 1)
	assert.True(t, f[0].Cut)
	assert.True(t, strings.HasSuffix(f[0].Text, "é"), "cut on a rune boundary")
	for _, d := range []string{"a", "b", "c", "d"} {
		s.Touch(filepath.Join(ws, d, "f"))
	}
	s.Touch(filepath.Join(ws, "e", "f"))
	early, err := readInside(filepath.Join(ws, "f", "AGENTS.md"), ws, true, nil)
	require.NoError(t, err)
	assert.True(t, early.Cut)
	assert.Greater(t, len(early.Text), MaxFileBytes-8, "an invalid byte early in a cut file does not cost the rest")
	total := 0
	for _, f := range s.Files() {
		total += len(f.Text)
	}
	assert.LessOrEqual(t, total, MaxTotalBytes)
	notices := strings.Join(s.Notices(), "\n")
	assert.Contains(t, notices, "left out")
	assert.Contains(t, notices, "only its first")
	assert.Empty(t, s.Notices(), "each notice once")
}
