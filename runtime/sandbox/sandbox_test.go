package sandbox

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Landlock only grants, so "everything but the secrets" is the siblings
// of every directory on the way down to each secret, never the secret or
// one of its ancestors.
func TestReadGrantsGoAroundEveryDeniedPath(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".ssh", ".aws", "src/app", ".config/gh", ".config/nvim"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, ".netrc"), []byte("x"), 0o600))
	denied := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config/gh"), filepath.Join(home, ".netrc"), filepath.Join(home, "missing")}
	grants, _ := grantsAround([]string{"/"}, denied)
	for _, d := range denied[:3] {
		for _, g := range grants {
			assert.False(t, within(g, d), "%s is readable through the grant %s", d, g)
		}
	}
	for _, want := range []string{filepath.Join(home, ".aws"), filepath.Join(home, "src"), filepath.Join(home, ".config/nvim")} {
		assert.True(t, slices.Contains(grants, want), "%s is not granted: %v", want, grants)
	}
	assert.False(t, slices.Contains(grants, "/"), "the root itself would grant everything")
	nothing, _ := grantsAround([]string{"/"}, nil)
	assert.Equal(t, []string{"/"}, nothing, "nothing denied: everything readable")
}

// A request the helper would have to guess about is refused before any
// helper starts.
func TestRequestsWithRelativePathsAreRefused(t *testing.T) {
	ok := Request{Path: "/bin/true", Argv: []string{"true"}, Dir: "/", Policy: Policy{WritableRoots: []string{"/w"}}}
	require.NoError(t, ok.validate())
	for name, mutate := range map[string]func(*Request){
		"relative program":       func(r *Request) { r.Path = "bin/true" },
		"no argv":                func(r *Request) { r.Argv = nil },
		"relative cwd":           func(r *Request) { r.Dir = "." },
		"relative root":          func(r *Request) { r.Policy.WritableRoots = []string{"w"} },
		"relative denied path":   func(r *Request) { r.Policy.DeniedPaths = []string{".ssh"} },
		"relative extra":         func(r *Request) { r.Policy.ExtraWritable = []string{"cache"} },
		"relative temporary dir": func(r *Request) { r.Policy.TempDir = "tmp" },
	} {
		r := ok
		r.Policy.WritableRoots = slices.Clone(ok.Policy.WritableRoots)
		mutate(&r)
		assert.Error(t, r.validate(), name)
	}
}

// The default protected paths are under home, and under
// $XDG_CONFIG_HOME too when it is elsewhere; no home, none.
func TestDefaultProtectedPathsFollowXDGConfigHome(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	got := DefaultProtectedPaths("/home/u", "/srv/cfg", "")
	for _, want := range []string{"/home/u/.bashrc", "/home/u/.profile", "/home/u/.zshrc", "/home/u/.gitconfig",
		"/home/u/.config/git", "/home/u/.config/systemd", "/home/u/.config/autostart", "/home/u/.config/fish",
		"/srv/cfg/git", "/srv/cfg/systemd", "/srv/cfg/autostart", "/srv/cfg/fish"} {
		assert.Contains(t, got, filepath.FromSlash(want))
	}
	assert.Equal(t, DefaultProtectedPaths("/home/u", "", ""), DefaultProtectedPaths("/home/u", "/home/u/.config", ""))
	assert.Equal(t, DefaultProtectedPaths("/home/u", "", ""), DefaultProtectedPaths("/home/u", "relative", ""))
	assert.Empty(t, DefaultProtectedPaths("", "/srv/cfg", ""))
	assert.Empty(t, DefaultProtectedPaths("/", "", ""))
}

// The PATH entries protected are per-user tool directories under home:
// right below it, or two levels down under a dot-directory or ~/go; not
// a project's deeper directories, not home itself, not relative or
// outside entries.
func TestPathProtectedPathsAreTheUsersToolDirectories(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	path := "/home/u/bin:/home/u/.cargo/bin:/home/u/go/bin:/home/u/proj/node_modules/.bin:/home/u/proj/bin:" +
		"/home/u:/usr/bin:bin:/home/u/.local/bin/:/home/u/../x/bin:/home/u/.cargo/bin"
	assert.Equal(t, []string{"/home/u/bin", "/home/u/.cargo/bin", "/home/u/go/bin", "/home/u/.local/bin"},
		PathProtectedPaths("/home/u", path))
	assert.Empty(t, PathProtectedPaths("", path))
	got := DefaultProtectedPaths("/home/u", "", path)
	for _, want := range []string{"/home/u/bin", "/home/u/.local/bin", "/home/u/.cargo/bin", "/home/u/go/bin",
		"/home/u/.vimrc", "/home/u/.emacs.d", "/home/u/.config/nvim", "/home/u/.config/zed"} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "/home/u/proj/bin")
}
