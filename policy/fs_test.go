package policy

import (
	"errors"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testFS() FS {
	return FS{
		Roots:              []string{"/w/root", "/w/root/nested", "/w/extra/"},
		ReadOnlyRoots:      []string{"/w/root/ro", "/w/extra/ro/"},
		DeniedPathPrefixes: []string{".git", "/.env", "secrets/keys/"},
	}
}

func skipOnWindows(t testing.TB) {
	if goruntime.GOOS == "windows" {
		t.Skip("tables use Unix paths")
	}
}

func TestFSResolve(t *testing.T) {
	skipOnWindows(t)
	long := strings.Repeat("a/", 3000)
	tests := []struct {
		name     string
		fs       *FS // nil means testFS()
		path     string
		access   Access
		wantRoot string
		wantRel  string
		reason   string // non-empty: want a refusal with this reason
	}{
		// Inside a root.
		{name: "plain file", path: "/w/root/a.txt", wantRoot: "/w/root", wantRel: "a.txt"},
		{name: "root itself", path: "/w/root", wantRoot: "/w/root", wantRel: "."},
		{name: "root with trailing slash", path: "/w/root/", wantRoot: "/w/root", wantRel: "."},
		{name: "trailing slash on a dir", path: "/w/root/sub/", wantRoot: "/w/root", wantRel: "sub"},
		{name: "repeated slashes are folded", path: "//w//root///sub//a.txt", wantRoot: "/w/root", wantRel: "sub/a.txt"},
		{name: "dot segments are folded", path: "/w/root/./sub/./a.txt", wantRoot: "/w/root", wantRel: "sub/a.txt"},
		{name: "dotdot inside the root", path: "/w/root/sub/../a.txt", wantRoot: "/w/root", wantRel: "a.txt"},
		{name: "dotdot out and back in", path: "/w/root/../root/a.txt", wantRoot: "/w/root", wantRel: "a.txt"},
		{name: "dotdot above / is /", path: "/../../w/root/a.txt", wantRoot: "/w/root", wantRel: "a.txt"},
		{name: "backslash is a plain byte on Unix", path: `/w/root/..\..\etc`, wantRoot: "/w/root", wantRel: `..\..\etc`},
		{name: "name starting with dots is local", path: "/w/root/..foo", wantRoot: "/w/root", wantRel: "..foo"},
		{name: "root given with trailing slash in policy", path: "/w/extra/b", wantRoot: "/w/extra", wantRel: "b"},
		{name: "very long path inside", path: "/w/root/" + long + "f", wantRoot: "/w/root", wantRel: long + "f"},
		{name: "very long dotdot chain back in", path: "/w/root/" + strings.Repeat("../", 3000) + "w/root/a", wantRoot: "/w/root", wantRel: "a"},

		// Nested roots: the longest containing root answers.
		{name: "nested root wins", path: "/w/root/nested/x", wantRoot: "/w/root/nested", wantRel: "x"},
		{name: "nested root itself", path: "/w/root/nested", wantRoot: "/w/root/nested", wantRel: "."},
		{name: "sibling of nested root stays in outer", path: "/w/root/nestedx/y", wantRoot: "/w/root", wantRel: "nestedx/y"},

		// Outside every root.
		{name: "dotdot escape", path: "/w/root/../outside/secret", reason: ReasonOutsideRoots},
		{name: "dotdot escape from subdir", path: "/w/root/sub/../../outside", reason: ReasonOutsideRoots},
		{name: "dotdot to sibling with root as prefix", path: "/w/root/../root-evil/secret", reason: ReasonOutsideRoots},
		{name: "sibling with root as string prefix", path: "/w/root-evil/secret", reason: ReasonOutsideRoots},
		{name: "sibling with root as string prefix, exact", path: "/w/root-evil", reason: ReasonOutsideRoots},
		{name: "parent of root", path: "/w", reason: ReasonOutsideRoots},
		{name: "parent of root via dotdot", path: "/w/root/..", reason: ReasonOutsideRoots},
		{name: "filesystem root", path: "/", reason: ReasonOutsideRoots},
		{name: "dotdot past filesystem root", path: "/w/root/../../../../etc/passwd", reason: ReasonOutsideRoots},
		{name: "proc self root is just another path", path: "/proc/self/root/w/root/a.txt", reason: ReasonOutsideRoots},
		{name: "very long dotdot chain escapes", path: "/w/root/" + strings.Repeat("x/../", 5000) + "../etc", reason: ReasonOutsideRoots},
		{name: "zero value has no roots", fs: &FS{}, path: "/w/root/a.txt", reason: ReasonOutsideRoots},
		{name: "relative root contains nothing", fs: &FS{Roots: []string{"w/root"}}, path: "/w/root/a.txt", reason: ReasonOutsideRoots},

		// Malformed input, checked in the seed's order.
		{name: "relative path", path: "w/root/a.txt", reason: ReasonNotAbsolute},
		{name: "dot-relative path", path: "./a.txt", reason: ReasonNotAbsolute},
		{name: "empty path", path: "", reason: ReasonNotAbsolute},
		{name: "tilde is not expanded", path: "~/a.txt", reason: ReasonNotAbsolute},
		{name: "relative with NUL is reported as relative", path: "a\x00b", reason: ReasonNotAbsolute},
		{name: "NUL byte", path: "/w/root/a.txt\x00.png", reason: ReasonNUL},
		{name: "NUL before invalid UTF-8", path: "/w/root/\xff\x00", reason: ReasonNUL},
		{name: "NUL before root boundary", path: "/etc/passwd\x00", reason: ReasonNUL},
		{name: "invalid UTF-8", path: "/w/root/\xff.txt", reason: ReasonInvalidUTF8},
		{name: "truncated UTF-8 sequence", path: "/w/root/\xe2\x82", reason: ReasonInvalidUTF8},
		{name: "invalid UTF-8 before root boundary", path: "/etc/\xc0\xaf", reason: ReasonInvalidUTF8},

		// Denied prefixes, relative to each root, "/"-bounded.
		{name: "denied dir exact", path: "/w/root/.git", reason: "denied prefix .git"},
		{name: "denied dir trailing slash", path: "/w/root/.git/", reason: "denied prefix .git"},
		{name: "under denied dir", path: "/w/root/.git/config", reason: "denied prefix .git"},
		{name: "denied via dotdot", path: "/w/root/sub/../.git/config", reason: "denied prefix .git"},
		{name: "denied via dot and slashes", path: "/w/root/.//.git//config", reason: "denied prefix .git"},
		{name: "denied prefix given with leading slash", path: "/w/root/.env", reason: "denied prefix /.env"},
		{name: "denied upper case", path: "/w/root/.GIT/config", reason: "denied prefix .git"},
		{name: "denied mixed case", path: "/w/root/.Env", reason: "denied prefix /.env"},
		{name: "denied trailing dot (Windows)", path: "/w/root/.git./config", reason: "denied prefix .git"},
		{name: "denied trailing space (Windows)", path: "/w/root/.git /config", reason: "denied prefix .git"},
		{name: "denied HFS+ ignorable code point", path: "/w/root/.g\u200cit/config", reason: "denied prefix .git"},
		{name: "denied BOM inside name", path: "/w/root/.en\ufeffv", reason: "denied prefix /.env"},
		{name: "denied dotless i (NTFS upper-cases it to I)", path: "/w/root/.g\u0131t/config", reason: "denied prefix .git"},
		{name: "denied dotted capital I (lower-cases to i)", path: "/w/root/.G\u0130T/hooks", reason: "denied prefix name .G\u0130T (at any depth)"},
		{name: "denied dotless i at depth", path: "/w/root/sub/.G\u0131T/config", reason: "denied prefix name .G\u0131T (at any depth)"},
		{name: "denied relative to nested root", path: "/w/root/nested/.git/config", reason: "denied prefix name .git (at any depth)"},
		{name: "denied in additional root", path: "/w/extra/.env", reason: "denied prefix /.env"},
		{name: "denied multi-component prefix", path: "/w/root/secrets/keys/id_rsa", reason: "denied prefix secrets/keys/"},
		{name: "denied multi-component prefix case variant", path: "/w/root/SECRETS/Keys", reason: "denied prefix secrets/keys/"},
		{name: "denied checked before read-only", access: AccessWrite, fs: &FS{Roots: []string{"/w/root"}, ReadOnlyRoots: []string{"/w/root"}, DeniedPathPrefixes: []string{".git"}}, path: "/w/root/.git/x", reason: "denied prefix .git"},
		{name: "boundary checked before denied", fs: &FS{Roots: []string{"/w/root"}, DeniedPathPrefixes: []string{"../root-evil"}}, path: "/w/root-evil/x", reason: ReasonOutsideRoots},
		{name: "empty prefix denies the whole root", fs: &FS{Roots: []string{"/w/root"}, DeniedPathPrefixes: []string{""}}, path: "/w/root/a", reason: "denied prefix "},
		{name: "slash prefix denies the whole root", fs: &FS{Roots: []string{"/w/root"}, DeniedPathPrefixes: []string{"/"}}, path: "/w/root", reason: "denied prefix /"},

		{name: "prefix is slash-bounded: .github", path: "/w/root/.github/workflows/ci.yml", wantRoot: "/w/root", wantRel: ".github/workflows/ci.yml"},
		{name: "prefix is slash-bounded: .gitignore", path: "/w/root/.gitignore", wantRoot: "/w/root", wantRel: ".gitignore"},
		{name: "prefix is slash-bounded: .envrc", path: "/w/root/.envrc", wantRoot: "/w/root", wantRel: ".envrc"},
		{name: "name at any depth: .env.local", path: "/w/root/.env.local", reason: "denied prefix name .env.local (at any depth)"},
		{name: "name at any depth: nested repo .git", path: "/w/root/sub/.git/config", reason: "denied prefix name .git (at any depth)"},
		{name: "name at any depth: .env template allowed", path: "/w/root/app/.env.example", wantRoot: "/w/root", wantRel: "app/.env.example"},
		{name: "multi-component prefix parent allowed", path: "/w/root/secrets", wantRoot: "/w/root", wantRel: "secrets"},
		{name: "multi-component prefix sibling allowed", path: "/w/root/secrets/keysX", wantRoot: "/w/root", wantRel: "secrets/keysX"},
		{name: "dotdot prefix never matches", fs: &FS{Roots: []string{"/w/root"}, DeniedPathPrefixes: []string{"../x"}}, path: "/w/root/x", wantRoot: "/w/root", wantRel: "x"},
		{name: "filesystem root as root", fs: &FS{Roots: []string{"/"}, DeniedPathPrefixes: []string{".git"}}, path: "/etc/passwd", wantRoot: "/", wantRel: "etc/passwd"},
		{name: "filesystem root as root, denied", fs: &FS{Roots: []string{"/"}, DeniedPathPrefixes: []string{".git"}}, path: "/.git/x", reason: "denied prefix .git"},

		// Read-only roots: writes only, "/"-bounded.
		{name: "read under read-only root", path: "/w/root/ro/x", wantRoot: "/w/root", wantRel: "ro/x"},
		{name: "write under read-only root", access: AccessWrite, path: "/w/root/ro/x", reason: ReasonReadOnlyRoot},
		{name: "write read-only root itself", access: AccessWrite, path: "/w/root/ro", reason: ReasonReadOnlyRoot},
		{name: "write read-only root with trailing slash", access: AccessWrite, path: "/w/root/ro/", reason: ReasonReadOnlyRoot},
		{name: "write read-only root given with trailing slash", access: AccessWrite, path: "/w/extra/ro/deep/x", reason: ReasonReadOnlyRoot},
		{name: "write read-only via dotdot", access: AccessWrite, path: "/w/root/sub/../ro/x", reason: ReasonReadOnlyRoot},
		{name: "write sibling of read-only root", access: AccessWrite, path: "/w/root/rox/a", wantRoot: "/w/root", wantRel: "rox/a"},
		{name: "write out of read-only root via dotdot", access: AccessWrite, path: "/w/root/ro/../a.txt", wantRoot: "/w/root", wantRel: "a.txt"},
		{name: "write plain file", access: AccessWrite, path: "/w/root/a.txt", wantRoot: "/w/root", wantRel: "a.txt"},
		{name: "read-only root outside roots is unreachable", fs: &FS{Roots: []string{"/w/root"}, ReadOnlyRoots: []string{"/w/lib"}}, path: "/w/lib/x", reason: ReasonOutsideRoots},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testFS()
			if tt.fs != nil {
				p = *tt.fs
			}
			root, rel, err := p.Resolve(tt.path, tt.access)
			if tt.reason == "" {
				require.NoError(t, err)
				require.Equal(t, tt.wantRoot, root)
				require.Equal(t, tt.wantRel, rel)
				return
			}
			require.ErrorIs(t, err, ErrPermissionDenied)
			var pe *PathError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tt.reason, pe.Reason)
			require.Equal(t, tt.path, pe.Path, "the error names the path as given")
			require.Empty(t, root)
			require.Empty(t, rel)
		})
	}
}

func TestFSDeniedRel(t *testing.T) {
	p := FS{DeniedPathPrefixes: []string{".git", ".env", "a/b"}}
	tests := []struct {
		rel  string
		want bool
	}{
		{".git", true},
		{".git/config", true},
		{".git/hooks/pre-commit", true},
		{".GIT/CONFIG", true},
		{".gIt", true},
		{".git.", true},
		{".git...", true},
		{".git \t", false}, // only dots and spaces are dropped
		{".ENV", true},
		{".env/x", true},
		{"a/b", true},
		{"A/B/c", true},
		{"a/bc", false},
		{"a", false},
		{".github", false},
		{".gitmodules", false},
		{"sub/.git", true},
		{"a/b/.git/hooks/pre-commit", true},
		{"deep/dir/.env.local", true},
		{"deep/dir/.ENV.Production", true},
		{"deep/.env.example", false},
		{"deep/.env.sample", false},
		{"deep/.env.template", false},
		{"deep/.environment", false},
		{".", false},
		{"", false},
		{"...", false},
		{"x/.env", true},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			require.Equal(t, tt.want, p.DeniedRel(tt.rel))
		})
	}
	require.False(t, FS{}.DeniedRel("src/main.go"), "no prefixes deny ordinary paths")
	require.True(t, FS{}.DeniedRel("sub/.git/config"), "the names are denied whatever the prefixes")
}

func TestDefaultDeniedPrefixesDenyGitAndEnv(t *testing.T) {
	p := FS{Roots: []string{"/r"}, DeniedPathPrefixes: DefaultDeniedPrefixes()}
	require.Equal(t, []string{".git", ".env"}, DefaultDeniedPrefixes())
	for _, path := range []string{"/r/.git/config", "/r/.env", "/r/.Git/HEAD"} {
		_, _, err := p.Resolve(path, AccessRead)
		require.ErrorIs(t, err, ErrPermissionDenied, path)
	}
	DefaultDeniedPrefixes()[0] = "changed"
	require.Equal(t, ".git", DefaultDeniedPrefixes()[0], "each call returns a fresh slice")
}

func TestPathErrorMessage(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"/w/root/.git/config", "Permission denied: /w/root/.git/config"},
		{"/w/root/a\x00b", `Permission denied: "/w/root/a\x00b"`},
		{"/w/\xff", `Permission denied: "/w/\xff"`},
		{"/w/new\nline", `Permission denied: "/w/new\nline"`},
		{"/w/ünïcode", "Permission denied: /w/ünïcode"},
	}
	for _, tt := range tests {
		err := error(&PathError{Path: tt.path, Reason: "x"})
		require.Equal(t, tt.want, err.Error())
		require.True(t, errors.Is(err, ErrPermissionDenied))
	}
}

func TestAccessString(t *testing.T) {
	require.Equal(t, "read", AccessRead.String())
	require.Equal(t, "write", AccessWrite.String())
}

func BenchmarkResolve(b *testing.B) {
	skipOnWindows(b)
	p := FS{
		Roots:              []string{"/home/user/project", "/home/user/lib"},
		ReadOnlyRoots:      []string{"/home/user/project/vendor"},
		DeniedPathPrefixes: DefaultDeniedPrefixes(),
	}
	paths := []string{
		"/home/user/project/internal/server/handler.go",
		"/home/user/project/.git/config",
		"/home/user/project/../project-evil/x",
		"/home/user/lib/src/a/b/c.go",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Resolve(paths[i%len(paths)], AccessWrite)
	}
}

// TestChildrenByNameAgreesWithResolve: wherever ChildrenByName lets a walk
// judge entries by name, ChildNameAllowed gives Resolve's answer, for
// nested roots, multi-component and case-folded denied prefixes, and
// hostile names; and it declines the directories where a root or a
// prefix sits right below.
func TestChildrenByNameAgreesWithResolve(t *testing.T) {
	p := FS{
		Roots:              []string{"/w/repo", "/w/repo/vendor/extra", "/other"},
		DeniedPathPrefixes: []string{".git", ".env", "secrets/keys", "deep/a/b"},
	}
	dirs := []string{"/w/repo", "/w/repo/src", "/w/repo/secrets", "/w/repo/SECRETS", "/w/repo/vendor",
		"/w/repo/vendor/extra", "/w/repo/vendor/extra/secrets", "/w/repo/deep", "/w/repo/deep/a", "/w/repo/deep/A.", "/other", "/other/src"}
	names := []string{"main.go", ".git", ".GIT", ".git.", ".g\u200cit", ".env", ".env.local", ".env.example", "keys", "KEYS",
		"extra", "b", "B", "a", "x\xff", "ok\u00e9", "secrets"}
	declined := map[string]bool{}
	for _, dir := range dirs {
		if _, _, err := p.Resolve(dir, AccessRead); err != nil {
			continue
		}
		if !p.ChildrenByName(dir) {
			declined[dir] = true
			continue
		}
		for _, name := range names {
			_, _, err := p.Resolve(dir+"/"+name, AccessRead)
			assert.Equal(t, err == nil, ChildNameAllowed(name), "%s/%s", dir, name)
		}
	}
	// Directories where a root or a prefix ends one level down.
	for _, dir := range []string{"/w/repo", "/w/repo/secrets", "/w/repo/SECRETS", "/w/repo/vendor", "/w/repo/deep/a", "/w/repo/vendor/extra/secrets"} {
		assert.True(t, declined[dir], "%s should be resolved entry by entry", dir)
	}
	for _, dir := range []string{"/w/repo/src", "/w/repo/deep", "/other/src"} {
		assert.False(t, declined[dir], "%s can be judged by name", dir)
	}
}
