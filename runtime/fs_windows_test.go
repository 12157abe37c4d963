package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/policy"
)

// The local filesystem on Windows: a root with spaces in its path, named
// with or without the \\?\ prefix and in any letter case, files written
// and read back byte for byte (CRLF stays CRLF), searches that honour
// .gitignore, and hard links to files outside refused both ways.
func TestWindowsLocalFSPathsAndLineEndings(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	root := filepath.Join(base, "My Project")
	require.NoError(t, os.Mkdir(root, 0o755))
	f, err := NewLocalFS(policy.FS{Roots: []string{root}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	require.NoError(t, err)
	defer f.Close()
	ctx := context.Background()

	crlf := "first line\r\nsecond line\r\n\r\nlast, no newline"
	target := filepath.Join(root, "sub dir", "notes.txt")
	require.NoError(t, f.WriteTextFile(ctx, target, crlf))
	raw, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, crlf, string(raw), "written as given: CRLF kept")

	for _, spelling := range []string{
		target,
		`\\?\` + target,
		strings.ToLower(target[:1]) + target[1:],
		strings.ToUpper(target),
	} {
		got, _, err := f.ReadFile(ctx, spelling)
		if assert.NoError(t, err, spelling) {
			assert.Equal(t, crlf, string(got), spelling)
		}
	}
	require.NoError(t, f.WriteTextFile(ctx, `\\?\`+target, crlf+"\r\nappended\r\n"))
	raw, err = os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, crlf+"\r\nappended\r\n", string(raw))

	_, _, err = f.ReadFile(ctx, filepath.Join(base, "elsewhere.txt"))
	assert.Error(t, err, "outside the root")
	_, _, err = f.ReadFile(ctx, filepath.Join(root, "GIT~1", "config"))
	assert.Error(t, err, "a short name is refused")

	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\r\n*.log\r\n"), 0o644))
	for _, p := range []string{"src\\a.go", "build\\out.go", "x.log", "sub dir\\b.go"} {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte("needle\r\n"), 0o644))
	}
	m, _, err := f.Grep(ctx, root, GrepOptions{Pattern: "needle"})
	require.NoError(t, err)
	var found []string
	for _, x := range m {
		rel, _ := filepath.Rel(root, x.Path)
		found = append(found, filepath.ToSlash(rel))
	}
	assert.ElementsMatch(t, []string{"src/a.go", "sub dir/b.go"}, found, ".gitignore (with CRLF lines) is honoured")

	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o644))
	hard := filepath.Join(root, "hard.txt")
	if err := os.Link(secret, hard); err != nil {
		t.Logf("no hard links here (%v); that part is not checked", err)
		return
	}
	_, _, err = f.ReadFile(ctx, hard)
	assert.Error(t, err, "a hard link to a file outside is not read")
	assert.Error(t, f.WriteTextFile(ctx, hard, "x"), "nor written")
	data, _ := os.ReadFile(secret)
	assert.Equal(t, "secret", string(data))
}
