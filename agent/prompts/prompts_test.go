package prompts

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandSubstitutesOnceAndAppendsUnusedArguments(t *testing.T) {
	for _, tt := range []struct{ body, args, want string }{
		{"fix $1 in $2", "a.go  b", "fix a.go in b"},
		{"all: $ARGUMENTS", "x y", "all: x y"},
		{"$1|$9", `"two words" rest`, "two words|"},
		{"$1", "$ARGUMENTS", "$ARGUMENTS"},
		{"do it", "now please", "do it\n\nnow please"},
		{"do it", "  ", "do it"},
	} {
		assert.Equal(t, tt.want, Expand(tt.body, tt.args), "%q with %q", tt.body, tt.args)
	}
}

func TestFrontmatter(t *testing.T) {
	meta, body := frontmatter("---\ndescription: \"Quoted: yes\"\nargument-hint: <x>\n  nested: ignored\n---\nBody\n")
	assert.Equal(t, "Quoted: yes", meta["description"])
	assert.Equal(t, "<x>", meta["argument-hint"])
	assert.NotContains(t, meta, "nested")
	assert.Equal(t, "Body\n", body)
	meta, body = frontmatter("no frontmatter\n---\n")
	assert.Empty(t, meta)
	assert.Equal(t, "no frontmatter\n---\n", body)
}

// Oversized files, bad names and too many commands are skipped with
// notices; the first definition of a name wins.
func TestLoadLimits(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(a, "x.md"), []byte("from a"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b, "x.md"), []byte("from b"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(a, "big.md"), []byte(strings.Repeat("x", MaxFileBytes+1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(a, "bad name.md"), []byte("x"), 0o644))
	lib := Load(Dirs{Commands: []string{a, b}})
	require.Len(t, lib.Commands, 1)
	assert.Equal(t, "from a", lib.Commands[0].Body)
	notes := strings.Join(lib.Notices, "\n")
	assert.Contains(t, notes, "big.md")
	assert.Contains(t, notes, "bad name.md")
	many := t.TempDir()
	for i := range MaxCommands + 5 {
		require.NoError(t, os.WriteFile(filepath.Join(many, "c"+strconv.Itoa(i)+".md"), []byte("x"), 0o644))
	}
	lib = Load(Dirs{Commands: []string{many}})
	assert.Len(t, lib.Commands, MaxCommands)
	assert.NotEmpty(t, lib.Notices)
}
