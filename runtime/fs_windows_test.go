package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/winetest"
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

// Every other spelling Windows resolves to .git, .env, .env.local or a
// denied directory (the user's .ssh, with the home directory as the
// workspace) is refused by every file operation, read and write: the
// volume's own short names (read back with GetShortPathName, so the test
// attacks what this file system really answers to), trailing dots and
// spaces, alternate data streams, device names and other letter cases.
// Nothing is read, no secret changes, nothing is created. The root given
// in its short spelling still serves its ordinary files (a TEMP under
// C:\Users\RUNNER~1 is common).
func TestWindowsLocalFSRefusesOtherSpellingsOfDeniedNames(t *testing.T) {
	root := filepath.Join(t.TempDir(), "workspace with a long name")
	secrets := map[string]string{
		`.git\config`:      "SECRET-git-config",
		`.git\hooks\x.txt`: "SECRET-hook",
		`.env`:             "SECRET-env",
		`.env.local`:       "SECRET-env-local",
		`.ssh\id_rsa`:      "SECRET-ssh-key",
		`sub\.git\config`:  "SECRET-nested-git",
	}
	for rel, content := range secrets {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "ordinary file.txt"), []byte("ordinary"), 0o644))
	ctx := context.Background()

	// spellings of the secret rel: the long name with its short
	// components put in, one component at a time and all of them.
	spellings := func(rel string) []string {
		var out []string
		comps := strings.Split(rel, `\`)
		long := root
		shortComps := make([]string, len(comps))
		for i, c := range comps {
			long = filepath.Join(long, c)
			shortComps[i] = c
			if s := winetest.ShortPath(long); s != "" && !strings.EqualFold(filepath.Base(s), c) {
				shortComps[i] = filepath.Base(s)
				mixed := append(append(append([]string{}, comps[:i]...), filepath.Base(s)), comps[i+1:]...)
				out = append(out, strings.Join(mixed, `\`))
			}
		}
		out = append(out, strings.Join(shortComps, `\`))
		first, rest, _ := strings.Cut(rel, `\`)
		if rest != "" {
			rest = `\` + rest
		}
		for _, f := range []string{first + ".", first + " ", first + ". .", strings.ToUpper(first),
			first + "::$DATA", first + ":x", first + "::$INDEX_ALLOCATION"} {
			out = append(out, f+rest)
		}
		return out
	}

	for _, spelledRoot := range []string{root, winetest.ShortPath(root)} {
		if spelledRoot == "" {
			continue
		}
		f, err := NewLocalFS(policy.FS{Roots: []string{spelledRoot}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes(),
			DeniedPaths: []string{filepath.Join(root, ".ssh")}})
		require.NoError(t, err)
		got, err := f.ReadTextFile(ctx, filepath.Join(spelledRoot, "ordinary file.txt"), 0, 0)
		require.NoError(t, err, "the root spelled %s serves its ordinary files", spelledRoot)
		require.Equal(t, "ordinary", got)

		for rel := range secrets {
			for _, s := range spellings(rel) {
				p := filepath.Join(spelledRoot, s)
				if got, err := f.ReadTextFile(ctx, p, 0, 0); !assert.Error(t, err, "read %s", p) {
					t.Errorf("read %s gave %q", p, got)
				}
				_, err := f.CheckRead(ctx, p)
				assert.Error(t, err, "check read %s", p)
				assert.Error(t, f.WriteTextFile(ctx, p, "OVERWRITTEN"), "write %s", p)
				_, err = f.CheckWrite(ctx, p, 1)
				assert.Error(t, err, "check write %s", p)
				removed, err := f.RemoveFile(ctx, p)
				assert.False(t, removed && err == nil, "remove %s", p)
				dir := filepath.Dir(p)
				if dir != filepath.Clean(spelledRoot) {
					entries, err := f.ListDirectory(ctx, dir)
					assert.True(t, err != nil || len(entries) == 0, "list %s: %v", dir, entries)
					_, err = f.CheckDir(dir)
					assert.Error(t, err, "a command's cwd %s", dir)
					m, _, err := f.Grep(ctx, dir, GrepOptions{Pattern: "SECRET"})
					assert.True(t, err != nil || len(m) == 0, "grep %s: %v", dir, m)
					g, _, err := f.Glob(ctx, dir, "*", 0)
					assert.True(t, err != nil || len(g) == 0, "glob %s: %v", dir, g)
					// A new file beside the secret, under this spelling of
					// its directory (a hook, a key).
					assert.Error(t, f.WriteTextFile(ctx, filepath.Join(dir, "planted.txt"), "x"), "create in %s", dir)
				}
			}
		}
		m, _, err := f.Grep(ctx, spelledRoot, GrepOptions{Pattern: "SECRET"})
		require.NoError(t, err)
		assert.Empty(t, m, "a search from the root finds no secret")
		require.NoError(t, f.Close())
	}
	for rel, content := range secrets {
		data, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		assert.Equal(t, content, string(data), "%s unchanged", rel)
		_, err = os.Stat(filepath.Join(root, filepath.Dir(rel), "planted.txt"))
		assert.ErrorIs(t, err, os.ErrNotExist, "nothing planted beside %s", rel)
	}
}
