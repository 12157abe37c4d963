//go:build unix

package runtime

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/policy"
)

// tree is a small project for behaviour tests:
//
//	root/a.txt, root/sub/b.txt, root/.git/config, root/.env,
//	root/ro/r.txt (a read-only root), and outside/secret beside root.
type tree struct {
	base, root, outside string
	fs                  *LocalFS
}

func newTree(t testing.TB, opts ...FSOption) *tree {
	t.Helper()
	if goruntime.GOOS == "windows" {
		t.Skip("fixtures use symlinks and Unix modes")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tr := &tree{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	writeFile(t, tr.root, "a.txt", "alpha\n")
	writeFile(t, tr.root, "sub/b.txt", "beta\n")
	writeFile(t, tr.root, ".git/config", "[core]\n")
	writeFile(t, tr.root, ".env", "TOKEN=x\n")
	writeFile(t, tr.root, "ro/r.txt", "read only\n")
	writeFile(t, tr.outside, "secret", "outside\n")
	tr.fs, err = NewLocalFS(policy.FS{
		Roots:              []string{tr.root},
		ReadOnlyRoots:      []string{filepath.Join(tr.root, "ro")},
		DeniedPathPrefixes: policy.DefaultDeniedPrefixes(),
	}, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { tr.fs.Close() })
	return tr
}

func (tr *tree) path(rel string) string { return filepath.Join(tr.root, rel) }

func writeFile(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func requireDenied(t testing.TB, err error, path string) {
	t.Helper()
	require.ErrorIs(t, err, policy.ErrPermissionDenied)
	var pe *policy.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, path, pe.Path, "the refusal names the path as given")
	require.True(t, strings.HasPrefix(err.Error(), "Permission denied: "), err.Error())
}

func TestNewLocalFSRejectsBadRoots(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "file", "x")
	tests := []struct {
		name string
		p    policy.FS
		want string
	}{
		{"no roots", policy.FS{}, "no roots"},
		{"relative root", policy.FS{Roots: []string{"rel/dir"}}, "must be an absolute path"},
		{"NUL in root", policy.FS{Roots: []string{dir + "\x00"}}, "must be an absolute path"},
		{"missing root", policy.FS{Roots: []string{filepath.Join(dir, "missing")}}, "must be an existing directory"},
		{"root is a file", policy.FS{Roots: []string{file}}, "must be an existing directory"},
		{"relative read-only root", policy.FS{Roots: []string{dir}, ReadOnlyRoots: []string{"ro"}}, "read-only root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewLocalFS(tt.p)
			require.Nil(t, f)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestNewLocalFSCleansAndCopiesPolicy(t *testing.T) {
	dir := t.TempDir()
	f, err := NewLocalFS(policy.FS{
		Roots:              []string{dir + "/", dir + "/./"},
		ReadOnlyRoots:      []string{dir + "/ro/", "/nonexistent/ro"},
		DeniedPathPrefixes: []string{".git"},
	})
	require.NoError(t, err)
	defer f.Close()
	p := f.Policy()
	require.Equal(t, []string{filepath.Clean(dir)}, p.Roots, "duplicates are dropped")
	require.Equal(t, []string{filepath.Join(dir, "ro"), "/nonexistent/ro"}, p.ReadOnlyRoots)
	p.Roots[0] = "/changed"
	require.Equal(t, filepath.Clean(dir), f.Policy().Roots[0], "Policy returns copies")
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close is idempotent")
	_, err = f.ReadTextFile(context.Background(), filepath.Join(dir, "x"), 0, 0)
	require.Error(t, err, "operations fail after Close")
}

func TestReadTextFileLineWindows(t *testing.T) {
	tr := newTree(t)
	ctx := context.Background()
	lines := writeFile(t, tr.root, "lines.txt", "one\ntwo\nthree\n")
	open := writeFile(t, tr.root, "open.txt", "one\r\ntwo\r\nthree")
	empty := writeFile(t, tr.root, "empty.txt", "")
	tests := []struct {
		name        string
		path        string
		line, limit int
		want        string
	}{
		{"neither: whole file", lines, 0, 0, "one\ntwo\nthree\n"},
		{"negative values are ignored", lines, -3, -1, "one\ntwo\nthree\n"},
		{"line alone: to the end", lines, 2, 0, "two\nthree\n"},
		{"limit alone: first lines", lines, 0, 2, "one\ntwo\n"},
		{"window", lines, 2, 1, "two\n"},
		{"window running past the end", lines, 3, 10, "three\n"},
		{"line past the end", lines, 4, 0, ""},
		{"line far past the end", lines, 100, 5, ""},
		{"first line", lines, 1, 1, "one\n"},
		{"no final newline: last line", open, 3, 1, "three"},
		{"CRLF kept byte for byte", open, 1, 2, "one\r\ntwo\r\n"},
		{"empty file", empty, 1, 1, ""},
		{"empty file whole", empty, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tr.fs.ReadTextFile(ctx, tt.path, tt.line, tt.limit)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// fifoPath makes a FIFO, which would block an ordinary open for reading.
func fifoPath(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	return p
}

func TestReadTextFileRefusals(t *testing.T) {
	tr := newTree(t, WithMaxFileSize(64))
	ctx := context.Background()
	writeFile(t, tr.root, "bin", "text\x00more")
	writeFile(t, tr.root, "latin1", "caf\xe9\n")
	writeFile(t, tr.root, "big", strings.Repeat("x", 65))
	writeFile(t, tr.root, "exact", strings.Repeat("x", 64))
	require.NoError(t, os.Link(filepath.Join(tr.outside, "secret"), tr.path("hardlink")))
	require.NoError(t, os.Symlink(".git/config", tr.path("cfg")))
	require.NoError(t, os.Symlink("../outside/secret", tr.path("out")))
	require.NoError(t, os.Symlink("loop", tr.path("loop")))
	fifo := fifoPath(t, tr.root)

	tests := []struct {
		name    string
		path    string
		is      error // errors.Is target
		message string
	}{
		{"missing file names the path", tr.path("missing.txt"), fs.ErrNotExist, tr.path("missing.txt")},
		{"missing parent", tr.path("nope/x.txt"), fs.ErrNotExist, tr.path("nope/x.txt")},
		{"directory", tr.path("sub"), ErrNotRegular, "is a directory"},
		{"FIFO is refused without blocking", fifo, ErrNotRegular, "named pipe"},
		{"NUL byte means binary", tr.path("bin"), ErrNotText, "binary"},
		{"invalid UTF-8", tr.path("latin1"), ErrNotText, "invalid UTF-8"},
		{"over the size cap", tr.path("big"), ErrTooLarge, "cap 64"},
		{"hard link", tr.path("hardlink"), policy.ErrPermissionDenied, "Permission denied"},
		{"symlink into .git", tr.path("cfg"), policy.ErrPermissionDenied, "Permission denied"},
		{"symlink out of the root", tr.path("out"), policy.ErrPermissionDenied, "Permission denied"},
		{"denied prefix", tr.path(".env"), policy.ErrPermissionDenied, "Permission denied"},
		{"relative path", "a.txt", policy.ErrPermissionDenied, "Permission denied: a.txt"},
		{"symlink loop", tr.path("loop"), syscall.ELOOP, tr.path("loop")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tr.fs.ReadTextFile(ctx, tt.path, 0, 0)
			require.ErrorIs(t, err, tt.is)
			require.ErrorContains(t, err, tt.message)
		})
	}
	got, err := tr.fs.ReadTextFile(ctx, tr.path("exact"), 0, 0)
	require.NoError(t, err, "a file exactly at the cap is read")
	require.Len(t, got, 64)
}

func TestReadTextFileHardLinkOption(t *testing.T) {
	tr := newTree(t, WithHardLinkReads())
	require.NoError(t, os.Link(tr.path("a.txt"), tr.path("a2.txt")))
	got, err := tr.fs.ReadTextFile(context.Background(), tr.path("a2.txt"), 0, 0)
	require.NoError(t, err)
	require.Equal(t, "alpha\n", got)
	err = tr.fs.WriteTextFile(context.Background(), tr.path("a2.txt"), "x")
	requireDenied(t, err, tr.path("a2.txt"))
}

func TestReadTextFileFollowsSymlinksInsideTheRoot(t *testing.T) {
	tr := newTree(t)
	require.NoError(t, os.Symlink("sub/b.txt", tr.path("blink")))
	require.NoError(t, os.Symlink("sub", tr.path("sublink")))
	for _, p := range []string{tr.path("blink"), tr.path("sublink/b.txt")} {
		got, err := tr.fs.ReadTextFile(context.Background(), p, 0, 0)
		require.NoError(t, err, p)
		require.Equal(t, "beta\n", got)
	}
}

func TestReadFileReportsExistence(t *testing.T) {
	tr := newTree(t)
	ctx := context.Background()
	writeFile(t, tr.root, "bin", "\x00\x01\xff")

	got, exists, err := tr.fs.ReadFile(ctx, tr.path("bin"))
	require.NoError(t, err)
	require.True(t, exists)
	require.Equal(t, []byte("\x00\x01\xff"), got, "ReadFile does not judge content")

	for _, p := range []string{tr.path("missing"), tr.path("missing/dir/x")} {
		got, exists, err = tr.fs.ReadFile(ctx, p)
		require.NoError(t, err, p)
		require.False(t, exists)
		require.Nil(t, got)
	}
	_, exists, err = tr.fs.ReadFile(ctx, tr.path(".git/config"))
	requireDenied(t, err, tr.path(".git/config"))
	require.False(t, exists)
	_, _, err = tr.fs.ReadFile(ctx, tr.path("sub"))
	require.ErrorIs(t, err, ErrNotRegular)
}

func TestWriteTextFile(t *testing.T) {
	ctx := context.Background()

	t.Run("creates parents inside the root", func(t *testing.T) {
		tr := newTree(t)
		p := tr.path("new/deep/dir/f.txt")
		require.NoError(t, tr.fs.WriteTextFile(ctx, p, "hello"))
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "hello", string(got))
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Zero(t, fi.Mode().Perm()&^0o644, "new files get at most 0644")
		require.NotZero(t, fi.Mode().Perm()&0o600)
	})

	t.Run("overwrites and keeps the mode", func(t *testing.T) {
		tr := newTree(t)
		for _, mode := range []fs.FileMode{0o600, 0o755, 0o640} {
			p := tr.path("mode.txt")
			writeFile(t, tr.root, "mode.txt", "old")
			require.NoError(t, os.Chmod(p, mode))
			require.NoError(t, tr.fs.WriteTextFile(ctx, p, "new"))
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, mode, fi.Mode().Perm())
			got, _ := os.ReadFile(p)
			require.Equal(t, "new", string(got))
		}
	})

	t.Run("leaves no temporary files", func(t *testing.T) {
		tr := newTree(t)
		for i := 0; i < 5; i++ {
			require.NoError(t, tr.fs.WriteTextFile(ctx, tr.path("sub/b.txt"), strings.Repeat("x", i)))
		}
		names, err := os.ReadDir(tr.path("sub"))
		require.NoError(t, err)
		require.Len(t, names, 1)
	})

	t.Run("writes through a directory symlink inside the root", func(t *testing.T) {
		tr := newTree(t)
		require.NoError(t, os.Symlink("sub", tr.path("sublink")))
		require.NoError(t, tr.fs.WriteTextFile(ctx, tr.path("sublink/c.txt"), "c"))
		got, err := os.ReadFile(tr.path("sub/c.txt"))
		require.NoError(t, err)
		require.Equal(t, "c", string(got))
	})

	t.Run("a missing denied directory is not created through a link", func(t *testing.T) {
		tr := newTree(t)
		require.NoError(t, os.RemoveAll(tr.path(".git")))
		require.NoError(t, os.Symlink(".", tr.path("self")))
		for _, p := range []string{tr.path("self/.git/hooks/pre-commit"), tr.path("self/ro/new/x")} {
			err := tr.fs.WriteTextFile(ctx, p, "x")
			requireDenied(t, err, p)
		}
		_, err := os.Lstat(tr.path(".git"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		_, err = os.Lstat(tr.path("ro/new"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})

	t.Run("a write-protected file stays protected", func(t *testing.T) {
		tr := newTree(t)
		require.NoError(t, os.Chmod(tr.path("a.txt"), 0o444))
		err := tr.fs.WriteTextFile(ctx, tr.path("a.txt"), "changed")
		require.ErrorIs(t, err, fs.ErrPermission)
		got, _ := os.ReadFile(tr.path("a.txt"))
		require.Equal(t, "alpha\n", string(got))
	})

	t.Run("a missing read-only root under a symlinked root path is protected", func(t *testing.T) {
		base, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		require.NoError(t, os.Mkdir(filepath.Join(base, "real"), 0o755))
		require.NoError(t, os.Symlink("real", filepath.Join(base, "link")))
		require.NoError(t, os.Symlink(".", filepath.Join(base, "real", "self")))
		root := filepath.Join(base, "link")
		f, err := NewLocalFS(policy.FS{Roots: []string{root}, ReadOnlyRoots: []string{filepath.Join(root, "vendor")}})
		require.NoError(t, err)
		defer f.Close()
		p := filepath.Join(root, "self", "vendor", "x.txt")
		requireDenied(t, f.WriteTextFile(ctx, p, "x"), p)
		_, err = os.Lstat(filepath.Join(base, "real", "vendor"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.NoError(t, f.WriteTextFile(ctx, filepath.Join(root, "self", "ok.txt"), "x"))
	})

	t.Run("refusals", func(t *testing.T) {
		tr := newTree(t, WithMaxFileSize(8))
		require.NoError(t, os.Symlink("a.txt", tr.path("alink")))
		require.NoError(t, os.Symlink("../outside/new", tr.path("dangling-out")))
		require.NoError(t, os.Symlink("missing", tr.path("dangling")))
		require.NoError(t, os.Symlink("ro", tr.path("rolink")))
		require.NoError(t, os.Symlink(".", tr.path("self")))
		require.NoError(t, os.Symlink("../outside", tr.path("outdir")))
		require.NoError(t, os.Link(tr.path("a.txt"), tr.path("a-hard.txt")))
		tests := []struct {
			name    string
			path    string
			denied  bool
			is      error
			content string
		}{
			{"read-only root", tr.path("ro/r.txt"), true, nil, ""},
			{"new file in read-only root", tr.path("ro/new.txt"), true, nil, ""},
			{"read-only root through a symlink", tr.path("rolink/r.txt"), true, nil, ""},
			{"new dir in read-only root through a symlink", tr.path("rolink/d/new.txt"), true, nil, ""},
			{"denied prefix", tr.path(".git/hooks/pre-commit"), true, nil, ""},
			{"denied prefix case variant", tr.path(".GIT/config"), true, nil, ""},
			{"denied prefix through a self link", tr.path("self/.git/config"), true, nil, ""},
			{"new denied dir through a self link", tr.path("self/.env"), true, nil, ""},
			{"symlink to a file inside", tr.path("alink"), true, nil, ""},
			{"dangling symlink out of the root", tr.path("dangling-out"), true, nil, ""},
			{"dangling symlink", tr.path("dangling"), true, nil, ""},
			{"parents through a dangling symlink", tr.path("dangling/x/y.txt"), false, fs.ErrNotExist, ""},
			{"directory symlink out of the root", tr.path("outdir/new.txt"), true, nil, ""},
			{"hard link", tr.path("a-hard.txt"), true, nil, ""},
			{"outside", filepath.Join(tr.outside, "new"), true, nil, ""},
			{"root itself", tr.root, false, ErrNotRegular, ""},
			{"a directory", tr.path("sub"), false, ErrNotRegular, ""},
			{"parent is a file", tr.path("a.txt/x"), false, syscall.ENOTDIR, ""},
			{"too large", tr.path("big.txt"), false, ErrTooLarge, "0123456789"},
		}
		before := snapshot(t, tr.base)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				content := tt.content
				if content == "" {
					content = "x"
				}
				err := tr.fs.WriteTextFile(ctx, tt.path, content)
				if tt.denied {
					requireDenied(t, err, tt.path)
				} else {
					require.ErrorIs(t, err, tt.is)
				}
			})
		}
		require.Equal(t, before, snapshot(t, tr.base), "refused writes change nothing")
	})
}

// snapshot maps every path under dir (symlinks not followed) to its type,
// mode and content or link target.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestListDirectory(t *testing.T) {
	tr := newTree(t)
	ctx := context.Background()
	require.NoError(t, os.Symlink("../outside", tr.path("zlink")))
	require.NoError(t, os.Symlink(".", tr.path("self")))
	writeFile(t, tr.root, ".GIT/x", "")
	writeFile(t, tr.root, ".github/ci.yml", "")

	got, err := tr.fs.ListDirectory(ctx, tr.root+"/")
	require.NoError(t, err)
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
		require.Equal(t, filepath.Join(tr.root, e.Name), e.Path)
	}
	require.Equal(t, []string{".github", "a.txt", "ro", "self", "sub", "zlink"}, names,
		"sorted, with .git, .GIT and .env hidden")
	require.Equal(t, Entry{Name: "a.txt", Path: tr.path("a.txt"), Size: 6}, got[1])
	require.True(t, got[2].IsDir)
	require.True(t, got[5].IsSymlink)
	require.False(t, got[5].IsDir, "a symlink to a directory is not a directory")

	t.Run("a self link does not reveal denied entries", func(t *testing.T) {
		got, err := tr.fs.ListDirectory(ctx, tr.path("self"))
		require.NoError(t, err)
		for _, e := range got {
			require.NotContains(t, []string{".git", ".env", ".GIT"}, e.Name)
			require.Equal(t, filepath.Join(tr.root, "self", e.Name), e.Path)
		}
	})
	t.Run("errors", func(t *testing.T) {
		_, err := tr.fs.ListDirectory(ctx, tr.path("a.txt"))
		require.ErrorIs(t, err, syscall.ENOTDIR)
		_, err = tr.fs.ListDirectory(ctx, tr.path("missing"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.ErrorContains(t, err, tr.path("missing"))
		_, err = tr.fs.ListDirectory(ctx, tr.path("zlink"))
		requireDenied(t, err, tr.path("zlink"))
		_, err = tr.fs.ListDirectory(ctx, tr.path(".git"))
		requireDenied(t, err, tr.path(".git"))
	})
}

func TestGlob(t *testing.T) {
	tr := newTree(t)
	ctx := context.Background()
	for _, rel := range []string{
		"main.go", "README.md", "docs/guide.md", "cmd/tool/main.go", "cmd/main.go",
		"cmd/tool/sub/main.go", "internal/x/x.go", "internal/x/x_test.go", ".hidden.go",
		".git/hooks/h.go", ".github/gen.go",
	} {
		writeFile(t, tr.root, rel, "package x\n")
	}
	require.NoError(t, os.Symlink("cmd", tr.path("cmdlink")))
	require.NoError(t, os.Symlink("../outside", tr.path("outlink")))

	tests := []struct {
		pattern string
		dir     string // relative to root; "" is the root
		want    []string
	}{
		{"*.md", "", []string{"README.md"}},
		{"**/*.md", "", []string{"README.md", "docs/guide.md"}},
		{"**/*.go", "", []string{".github/gen.go", ".hidden.go", "cmd/main.go", "cmd/tool/main.go", "cmd/tool/sub/main.go", "internal/x/x.go", "internal/x/x_test.go", "main.go"}},
		{"cmd/**/main.go", "", []string{"cmd/main.go", "cmd/tool/main.go", "cmd/tool/sub/main.go"}},
		{"cmd/*/main.go", "", []string{"cmd/tool/main.go"}},
		{"**/**/x/*_test.go", "", []string{"internal/x/x_test.go"}},
		{"internal/**", "", []string{"internal", "internal/x", "internal/x/x.go", "internal/x/x_test.go"}},
		{"{docs,cmd}/*.{md,go}", "", []string{"cmd/main.go", "docs/guide.md"}},
		{"./cmd//tool/main.go", "", []string{"cmd/tool/main.go"}},
		{"ma?n.go", "", []string{"main.go"}},
		{"[mR]*", "", []string{"README.md", "main.go"}},
		{"*.go", "cmd/tool", []string{"cmd/tool/main.go"}},
		{"**/main.go", "cmdlink", []string{"cmdlink/main.go", "cmdlink/tool/main.go", "cmdlink/tool/sub/main.go"}},
		{"cmdlink/**", "", []string{"cmdlink"}},
		{"outlink/**", "", []string{"outlink"}},
		{"**/hooks/*", "", nil},
		{"nothing*", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" in "+tt.dir, func(t *testing.T) {
			got, truncated, err := tr.fs.Glob(ctx, tr.path(tt.dir), tt.pattern, 0)
			require.NoError(t, err)
			require.False(t, truncated)
			var want []string
			for _, w := range tt.want {
				want = append(want, tr.path(w))
			}
			require.Equal(t, want, got)
		})
	}

	t.Run("truncates at max", func(t *testing.T) {
		got, truncated, err := tr.fs.Glob(ctx, tr.root, "**/*.go", 3)
		require.NoError(t, err)
		require.True(t, truncated)
		require.Len(t, got, 3)
		require.IsIncreasing(t, got)
	})
	t.Run("bad patterns", func(t *testing.T) {
		for _, p := range []string{"", "/abs/*.go", "../*.go", "a/../../b", "[", "a/[z-a", ".", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"} {
			_, _, err := tr.fs.Glob(ctx, tr.root, p, 0)
			require.Error(t, err, p)
		}
	})
	t.Run("dir must be a directory", func(t *testing.T) {
		_, _, err := tr.fs.Glob(ctx, tr.path("main.go"), "*", 0)
		require.ErrorIs(t, err, syscall.ENOTDIR)
		_, _, err = tr.fs.Glob(ctx, tr.path(".git"), "*", 0)
		requireDenied(t, err, tr.path(".git"))
	})
}

func TestGrep(t *testing.T) {
	tr := newTree(t, WithMaxFileSize(1<<10))
	ctx := context.Background()
	writeFile(t, tr.root, "a.go", "package a\n// TODO one\nfunc A() {}\n")
	writeFile(t, tr.root, "b.txt", "todo lower\r\nnothing\r\n")
	writeFile(t, tr.root, "sub/c.go", "// TODO two\n// TODO three\n")
	writeFile(t, tr.root, "sub/bin.go", "// TODO \x00 binary\n")
	writeFile(t, tr.root, "sub/big.go", "// TODO\n"+strings.Repeat("x", 2<<10))
	writeFile(t, tr.root, "long.txt", strings.Repeat("é", 200)+" TODO\n")
	writeFile(t, tr.root, ".git/TODO", "TODO secret\n")
	require.NoError(t, os.Symlink("sub", tr.path("zlink")))
	require.NoError(t, os.Symlink("sub/c.go", tr.path("zfile.go")))

	type m struct {
		rel  string
		line int
	}
	tests := []struct {
		name    string
		path    string
		opt     GrepOptions
		want    []m
		trunc   bool
		checkFn func(t *testing.T, got []GrepMatch)
	}{
		{name: "walk order, symlinks, binary, big and denied skipped", path: tr.root, opt: GrepOptions{Pattern: "TODO"},
			want: []m{{"a.go", 2}, {"long.txt", 1}, {"sub/c.go", 1}, {"sub/c.go", 2}}},
		{name: "ignore case", path: tr.root, opt: GrepOptions{Pattern: "todo", IgnoreCase: true, Include: "*.txt"},
			want: []m{{"b.txt", 1}, {"long.txt", 1}}},
		{name: "include by name matches at any depth", path: tr.root, opt: GrepOptions{Pattern: "TODO", Include: "*.go"},
			want: []m{{"a.go", 2}, {"sub/c.go", 1}, {"sub/c.go", 2}}},
		{name: "include by path", path: tr.root, opt: GrepOptions{Pattern: "TODO", Include: "sub/**"},
			want: []m{{"sub/c.go", 1}, {"sub/c.go", 2}}},
		{name: "include braces", path: tr.root, opt: GrepOptions{Pattern: ".", Include: "{a,c}.go"},
			want: []m{{"a.go", 1}, {"a.go", 2}, {"a.go", 3}, {"sub/c.go", 1}, {"sub/c.go", 2}}},
		{name: "truncated at MaxMatches", path: tr.root, opt: GrepOptions{Pattern: "TODO", MaxMatches: 2},
			want: []m{{"a.go", 2}, {"long.txt", 1}}, trunc: true},
		{name: "exactly MaxMatches is not truncated", path: tr.path("sub"), opt: GrepOptions{Pattern: "TODO", MaxMatches: 2},
			want: []m{{"sub/c.go", 1}, {"sub/c.go", 2}}},
		{name: "single file", path: tr.path("a.go"), opt: GrepOptions{Pattern: "^func"},
			want: []m{{"a.go", 3}}},
		{name: "single file through a symlink", path: tr.path("zfile.go"), opt: GrepOptions{Pattern: "three"},
			want: []m{{"zfile.go", 2}}},
		{name: "directory through a symlink", path: tr.path("zlink"), opt: GrepOptions{Pattern: "two"},
			want: []m{{"zlink/c.go", 1}}},
		{name: "single binary file gives nothing", path: tr.path("sub/bin.go"), opt: GrepOptions{Pattern: "TODO"}},
		{name: "dollar anchors at line end before CR only with \\r", path: tr.path("b.txt"), opt: GrepOptions{Pattern: `lower\r$`},
			want: []m{{"b.txt", 1}}},
		{name: "text anchors disable the whole-file filter", path: tr.path("sub/c.go"), opt: GrepOptions{Pattern: `\A// TODO three\z`},
			want: []m{{"sub/c.go", 2}}},
		{name: "caret is a line anchor", path: tr.path("a.go"), opt: GrepOptions{Pattern: `^// TODO`},
			want: []m{{"a.go", 2}}},
		{name: "long lines are cut on a rune boundary", path: tr.path("long.txt"), opt: GrepOptions{Pattern: "TODO"},
			want: []m{{"long.txt", 1}}, checkFn: func(t *testing.T, got []GrepMatch) {
				require.Len(t, got[0].Text, 300)
				require.Equal(t, strings.Repeat("é", 150), got[0].Text)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated, err := tr.fs.Grep(ctx, tt.path, tt.opt)
			require.NoError(t, err)
			require.Equal(t, tt.trunc, truncated)
			var gotM []m
			for _, g := range got {
				rel, err := filepath.Rel(tr.root, g.Path)
				require.NoError(t, err)
				gotM = append(gotM, m{rel, g.Line})
				require.NotContains(t, g.Text, "\n")
			}
			require.Equal(t, tt.want, gotM)
			if tt.checkFn != nil {
				tt.checkFn(t, got)
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		_, _, err := tr.fs.Grep(ctx, tr.root, GrepOptions{Pattern: "("})
		require.ErrorContains(t, err, "invalid pattern")
		_, _, err = tr.fs.Grep(ctx, tr.root, GrepOptions{Pattern: "x", Include: "["})
		require.ErrorContains(t, err, "invalid include")
		_, _, err = tr.fs.Grep(ctx, tr.path(".git"), GrepOptions{Pattern: "x"})
		requireDenied(t, err, tr.path(".git"))
		_, _, err = tr.fs.Grep(ctx, tr.path("missing"), GrepOptions{Pattern: "x"})
		require.ErrorIs(t, err, fs.ErrNotExist)
		_, _, err = tr.fs.Grep(ctx, tr.path("sub/big.go"), GrepOptions{Pattern: "x"})
		require.ErrorIs(t, err, ErrTooLarge, "a file named directly reports the cap")
	})
}

func TestWalksStopAtMaxDepth(t *testing.T) {
	tr := newTree(t)
	deep := filepath.Join(tr.root, "deep")
	dir := deep
	for range maxWalkDepth + 5 {
		dir = filepath.Join(dir, "d")
	}
	writeFile(t, dir, "leaf.txt", "needle\n")
	writeFile(t, deep, "shallow/leaf.txt", "needle\n")
	got, _, err := tr.fs.Glob(context.Background(), deep, "**/leaf.txt", 0)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(deep, "shallow/leaf.txt")}, got)
	matches, _, err := tr.fs.Grep(context.Background(), deep, GrepOptions{Pattern: "needle"})
	require.NoError(t, err)
	require.Len(t, matches, 1)
}

// countdownCtx is a context whose Err turns to Canceled after n calls, to
// cancel a walk at a deterministic point.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCancelledContextStopsOperations(t *testing.T) {
	tr := newTree(t)
	for i := 0; i < 30; i++ {
		writeFile(t, tr.root, filepath.Join("many", strings.Repeat("d", i%5+1), "f"+strings.Repeat("x", i)+".txt"), "match\n")
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ops := map[string]func(ctx context.Context) error{
		"ReadTextFile": func(ctx context.Context) error { _, err := tr.fs.ReadTextFile(ctx, tr.path("a.txt"), 0, 0); return err },
		"ReadFile":     func(ctx context.Context) error { _, _, err := tr.fs.ReadFile(ctx, tr.path("a.txt")); return err },
		"WriteTextFile": func(ctx context.Context) error {
			return tr.fs.WriteTextFile(ctx, tr.path("w.txt"), "x")
		},
		"ListDirectory": func(ctx context.Context) error { _, err := tr.fs.ListDirectory(ctx, tr.root); return err },
		"Glob":          func(ctx context.Context) error { _, _, err := tr.fs.Glob(ctx, tr.root, "**", 0); return err },
		"Grep": func(ctx context.Context) error {
			_, _, err := tr.fs.Grep(ctx, tr.root, GrepOptions{Pattern: "match"})
			return err
		},
	}
	for name, op := range ops {
		t.Run(name+" before start", func(t *testing.T) {
			require.ErrorIs(t, op(cancelled), context.Canceled)
		})
	}
	for _, name := range []string{"Glob", "Grep"} {
		t.Run(name+" mid-walk", func(t *testing.T) {
			ctx := &countdownCtx{Context: context.Background()}
			ctx.n.Store(10)
			require.ErrorIs(t, ops[name](ctx), context.Canceled)
		})
	}
	_, err := os.Lstat(tr.path("w.txt"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestRootEscapeIsPermissionDenied pins the text of os's unexported
// errPathEscapes, which rootErr turns into a refusal.
func TestRootEscapeIsPermissionDenied(t *testing.T) {
	tr := newTree(t)
	require.NoError(t, os.Symlink("../outside/secret", tr.path("out")))
	r, err := os.OpenRoot(tr.root)
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Open("out")
	require.Error(t, err)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, escapeText, pe.Err.Error())
	requireDenied(t, rootErr("open", "/given", err), "/given")
	require.True(t, errors.Is(rootErr("open", "/given", &fs.PathError{Op: "openat", Path: "x", Err: syscall.ENOENT}), fs.ErrNotExist))
}

func TestPortableRealPathFallback(t *testing.T) {
	tr := newTree(t)
	tr.fs.fdPath = noFDPath
	ctx := context.Background()
	require.NoError(t, os.Symlink(".git/config", tr.path("cfg")))
	require.NoError(t, os.Symlink(".", tr.path("self")))
	got, err := tr.fs.ReadTextFile(ctx, tr.path("a.txt"), 0, 0)
	require.NoError(t, err)
	require.Equal(t, "alpha\n", got)
	_, err = tr.fs.ReadTextFile(ctx, tr.path("cfg"), 0, 0)
	requireDenied(t, err, tr.path("cfg"))
	require.Error(t, tr.fs.WriteTextFile(ctx, tr.path("self/.git/x"), "x"))
	require.NoError(t, tr.fs.WriteTextFile(ctx, tr.path("self/sub/new.txt"), "x"))
}
