//go:build unix

package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/policy"
)

// marker is in the content and in a file name of everything a LocalFS
// must never reveal. /etc/passwd is recognised by passwdMarker.
const (
	marker       = "XyzzyLeak"
	passwdMarker = "root:x:0:"
	// probeName replaces "passwd" in write inputs, so a bug could at
	// worst create /etc/acp-fs-attack-probe, never overwrite a real file.
	probeName = "acp-fs-attack-probe"
)

// attackFixture is the hostile tree:
//
//	base/root          Roots[0]: allowed files, .git, .env, .GIT, .Env,
//	                   a read-only root ro/, and every kind of bad link
//	base/extra         Roots[1] (an additional directory) with its own .env
//	base/root-evil     sibling whose name has root as a string prefix
//	base/outside       outside every root
type attackFixture struct {
	base, root, extra, evil, outside string
	fs                               *LocalFS
	// forbiddenRead and forbiddenWrite are real paths (with subtrees)
	// the oracle refuses, written out independently of package policy.
	forbiddenRead, forbiddenWrite []string
	// hardLink shares its inode with outside/hlsecret: its content is
	// forbidden, its name (in a listing) is not.
	hardLink string
}

func newAttackFixture(t *testing.T, portable bool) *attackFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	a := &attackFixture{
		base:    base,
		root:    filepath.Join(base, "root"),
		extra:   filepath.Join(base, "extra"),
		evil:    filepath.Join(base, "root-evil"),
		outside: filepath.Join(base, "outside"),
	}
	allowed := map[string]string{
		"root/a.txt":          "ALLOWED a\n",
		"root/sub/b.txt":      "ALLOWED b\nsecond line\n",
		"root/sub/deep/c.go":  "package c // ALLOWED\n",
		"root/ro/r.txt":       "ALLOWED read-only\n",
		"root/.github/ci.yml": "ALLOWED ci\n",
		"root/.envrc":         "ALLOWED envrc\n",
		"extra/e.txt":         "ALLOWED extra\n",
	}
	forbidden := []string{
		"root/.git/config", "root/.git/HEAD", "root/.git/hooks/pre-commit",
		"root/.env", "root/.GIT/config", "root/.Env",
		"extra/.env", "root-evil/secret", "outside/secret", "outside/hlsecret",
	}
	for rel, content := range allowed {
		writeFile(t, base, rel, content)
	}
	for _, rel := range forbidden {
		writeFile(t, base, rel, fmt.Sprintf("%s-CONTENT %s\n", marker, rel))
	}
	// Forbidden directories also hold a file whose name is the marker, so
	// a leaked listing, glob or grep path shows up too.
	for _, dir := range []string{"root/.git", "root/.GIT", "root-evil", "outside"} {
		writeFile(t, base, filepath.Join(dir, marker+"-NAME"), marker+"-CONTENT name\n")
	}
	links := map[string]string{
		"rel-out":      "../outside",
		"abs-out":      a.outside,
		"etclink":      "/etc",
		"trail":        "../outside/",
		"abs-file":     filepath.Join(a.outside, "secret"),
		"rel-file":     "../outside/secret",
		"gitlink":      ".git",
		"cfg":          ".git/config",
		"envlink":      ".env",
		"deepgit":      "sub/../.git",
		"sub/subgit":   "../.git",
		"evillink":     "../root-evil",
		"self":         ".",
		"up":           "..",
		"rolink":       "ro",
		"loop1":        "loop2",
		"loop2":        "loop1",
		"dangling":     "nowhere",
		"procroot":     "/proc/self/root",
		"extralink":    "../extra",
		"gittrail":     ".git/",
		"sub/deeplink": "../../outside/secret",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(a.root, name)))
	}
	require.NoError(t, os.Link(filepath.Join(a.outside, "hlsecret"), filepath.Join(a.root, "hl")))

	a.forbiddenRead = []string{
		filepath.Join(a.root, ".git"), filepath.Join(a.root, ".env"),
		filepath.Join(a.root, ".GIT"), filepath.Join(a.root, ".Env"),
		filepath.Join(a.extra, ".env"), a.evil, a.outside,
		filepath.Join(a.root, "secrets"), // denied, and does not exist yet
	}
	a.hardLink = filepath.Join(a.root, "hl")
	a.forbiddenWrite = append(slices.Clone(a.forbiddenRead), filepath.Join(a.root, "ro"))

	a.fs, err = NewLocalFS(policy.FS{
		Roots:              []string{a.root, a.extra},
		ReadOnlyRoots:      []string{filepath.Join(a.root, "ro")},
		DeniedPathPrefixes: append(policy.DefaultDeniedPrefixes(), "secrets"),
	})
	require.NoError(t, err)
	if portable {
		a.fs.fdPath = noFDPath
	}
	t.Cleanup(func() { a.fs.Close() })
	return a
}

// allowedReal is the oracle for content: real is an existing real path
// (no symlinks) whose content the rules allow to read, or to write.
func (a *attackFixture) allowedReal(real string, write bool) bool {
	return real != a.hardLink && a.allowedName(real, write)
}

// allowedName is the oracle for names: real may appear in a result.
func (a *attackFixture) allowedName(real string, write bool) bool {
	inRoot := false
	for _, r := range []string{a.root, a.extra} {
		if real == r || strings.HasPrefix(real, r+"/") {
			inRoot = true
		}
	}
	if !inRoot {
		return false
	}
	forbidden := a.forbiddenRead
	if write {
		forbidden = a.forbiddenWrite
	}
	for _, f := range forbidden {
		if real == f || strings.HasPrefix(real, f+"/") {
			return false
		}
	}
	return true
}

// attackInputs builds the corpus: tails × spellings, plus absolute paths
// that have nothing to do with the roots.
func attackInputs(a *attackFixture) []string {
	rootTails := []string{
		"", ".", "..", "../..", "a.txt", "sub", "sub/b.txt", "sub/deep/c.go",
		".git", ".git/config", ".git/hooks/pre-commit", ".git/" + marker + "-NAME",
		".env", ".GIT/config", ".Env", ".gIt/HEAD", ".git./config", ".git /config", ".g\u200cit/config",
		".github/ci.yml", ".envrc", "ro/r.txt", "ro", "rolink/r.txt", "rolink",
		"rel-out", "rel-out/secret", "abs-out/secret", "abs-out", "etclink", "etclink/passwd",
		"trail", "trail/secret", "abs-file", "rel-file", "sub/deeplink",
		"gitlink", "gitlink/config", "gittrail", "gittrail/config", "cfg", "envlink",
		"deepgit/config", "sub/subgit/config", "sub/subgit",
		"evillink/secret", "self", "self/.git/config", "self/.env", "self/a.txt", "self/self/.GIT/config",
		"up/outside/secret", "up/root-evil/secret", "up/root/.git/config",
		"loop1", "loop1/x", "dangling", "dangling/x", "procroot/etc/passwd", "procroot" + a.outside + "/secret",
		"hl", "extralink/e.txt", "extralink/.env",
		"../root-evil/secret", "../outside/secret", "../outside", "sub/../../outside/secret",
		"sub/../.git/config", "../root/.git/config", "./.git/config", "sub/./../.env",
		"new/file.txt", "sub/new.txt", "self/new.txt", "gitlink/new", "rolink/new/x.txt",
		"secrets/new.txt", "self/secrets/new.txt", "self/secrets", "sub/../self/Secrets/x/y",
	}
	spellings := []func(root, tail string) string{
		func(r, t string) string { return r + "/" + t },
		func(r, t string) string { return r + "/" + t + "/" },
		func(r, t string) string { return r + "/" + t + "/." },
		func(r, t string) string { return strings.ReplaceAll(r+"/"+t, "/", "//") },
		func(r, t string) string { return r + "/./" + t },
		func(r, t string) string { return r + "/sub/../" + t },
		func(r, t string) string { return r + "/" + strings.ToUpper(t) },
		func(r, t string) string { return r + "/" + t + "\x00.txt" },
		func(r, t string) string { return r + "/" + t + "\xff" },
		func(r, t string) string { return r + "/" + strings.Repeat("./", 2500) + t },
		func(r, t string) string { return r + "/" + strings.Repeat("x/../", 1000) + t },
		func(r, t string) string { return "/proc/self/root" + r + "/" + t },
		func(r, t string) string { return t },
		func(r, t string) string { return r + "-evil/" + t },
		func(r, t string) string { return r + "/" + t + strings.Repeat("a", 5000) },
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, tail := range rootTails {
		for _, s := range spellings {
			add(s(a.root, tail))
		}
	}
	for _, tail := range []string{"", "e.txt", ".env", ".ENV", "../root/.git/config", "../outside/secret", "../root-evil"} {
		for _, s := range spellings[:7] {
			add(s(a.extra, tail))
		}
	}
	for _, p := range []string{
		"/", "/etc/passwd", "/etc", "/proc/self/root/etc/passwd", "/proc/self/cwd", "/proc/self/environ",
		"/proc/self/fd/0", "/dev/zero", "/dev/null", a.base, a.outside + "/secret", a.evil + "/secret",
		a.root + "/" + strings.Repeat("a/", 32<<10), // a 64 KiB path
		a.root + "/" + strings.Repeat("../", 20) + "etc/passwd",
		"~/.ssh/id_rsa", "", ".", "..", "../../etc/passwd",
	} {
		add(p)
	}
	return out
}

type attackOp struct {
	name string
	run  func(ctx context.Context, a *attackFixture, t *testing.T, path string) (succeeded bool)
}

func attackOps() []attackOp {
	return []attackOp{
		{"ReadTextFile", func(ctx context.Context, a *attackFixture, t *testing.T, p string) bool {
			got, err := a.fs.ReadTextFile(ctx, p, 0, 0)
			a.checkText(t, p, err, got)
			if err != nil {
				return false
			}
			a.checkReadFrom(t, p, []byte(got))
			return true
		}},
		{"ReadFile", func(ctx context.Context, a *attackFixture, t *testing.T, p string) bool {
			got, exists, err := a.fs.ReadFile(ctx, p)
			a.checkText(t, p, err, string(got))
			if err != nil {
				return false
			}
			if !exists {
				require.Nil(t, got)
				_, statErr := os.Stat(filepath.Clean(p))
				require.Error(t, statErr, "ReadFile said %s does not exist", short(p))
				return true
			}
			a.checkReadFrom(t, p, got)
			return true
		}},
		{"WriteTextFile", func(ctx context.Context, a *attackFixture, t *testing.T, p string) bool {
			p = strings.ReplaceAll(p, "passwd", probeName)
			content := "WRITTEN " + fmt.Sprint(len(p))
			err := a.fs.WriteTextFile(ctx, p, content)
			a.checkText(t, p, err, "")
			if err != nil {
				return false
			}
			real, rerr := filepath.EvalSymlinks(filepath.Clean(p))
			require.NoError(t, rerr, "written path %s must exist", short(p))
			require.True(t, a.allowedReal(real, true), "write of %s landed on %s", short(p), real)
			got, rerr := os.ReadFile(real)
			require.NoError(t, rerr)
			require.Equal(t, content, string(got))
			return true
		}},
		{"ListDirectory", func(ctx context.Context, a *attackFixture, t *testing.T, p string) bool {
			entries, err := a.fs.ListDirectory(ctx, p)
			a.checkText(t, p, err, "")
			for _, e := range entries {
				a.checkText(t, p, nil, e.Name)
				a.checkResultPath(t, p, e.Path)
			}
			return err == nil
		}},
		{"Glob", func(ctx context.Context, a *attackFixture, t *testing.T, p string) bool {
			paths, _, err := a.fs.Glob(ctx, p, "**", 1<<20)
			a.checkText(t, p, err, "")
			for _, r := range paths {
				a.checkResultPath(t, p, r)
			}
			return err == nil
		}},
		{"Grep", func(ctx context.Context, a *attackFixture, t *testing.T, p string) bool {
			matches, _, err := a.fs.Grep(ctx, p, GrepOptions{Pattern: marker + "|" + passwdMarker + "|ALLOWED|WRITTEN", MaxMatches: 1 << 20})
			a.checkText(t, p, err, "")
			for _, m := range matches {
				a.checkText(t, p, nil, m.Text)
				a.checkResultPath(t, p, m.Path)
				real, rerr := filepath.EvalSymlinks(m.Path)
				require.NoError(t, rerr)
				require.True(t, a.allowedReal(real, false), "grep of %s matched in %s", short(p), real)
			}
			return err == nil
		}},
	}
}

// short quotes p for a failure message, cut to a readable length.
func short(p string) string {
	if len(p) > 160 {
		return fmt.Sprintf("%q…(%d bytes)", p[:160], len(p))
	}
	return fmt.Sprintf("%q", p)
}

// checkText fails if a result or an error message carries a secret.
func (a *attackFixture) checkText(t *testing.T, input string, err error, s string) {
	t.Helper()
	for _, m := range []string{marker, passwdMarker} {
		require.NotContains(t, s, m, "input %s leaked", short(input))
		if err != nil {
			// The message names the input; only what is beyond it counts.
			msg := strings.ReplaceAll(err.Error(), input, "")
			msg = strings.ReplaceAll(msg, strconv.Quote(input), "")
			require.NotContains(t, msg, m, "input %s leaked in its error", short(input))
		}
	}
}

// checkReadFrom proves read content came from an allowed file: the input
// resolves (by the OS, following every link) to an allowed real path
// whose content is exactly what was returned.
func (a *attackFixture) checkReadFrom(t *testing.T, input string, got []byte) {
	t.Helper()
	real, err := filepath.EvalSymlinks(filepath.Clean(input))
	require.NoError(t, err, "read of %s succeeded but the OS cannot resolve it", short(input))
	require.True(t, a.allowedReal(real, false), "read of %s came from %s", short(input), real)
	want, err := os.ReadFile(real)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// checkResultPath proves a listed, globbed or grepped path is inside the
// roots: lexically under the input, and its parent's real path, joined
// with its own (unresolved) name, is allowed.
func (a *attackFixture) checkResultPath(t *testing.T, input, p string) {
	t.Helper()
	require.NotContains(t, p, marker)
	rel, err := filepath.Rel(filepath.Clean(input), p)
	require.NoError(t, err)
	require.True(t, rel == "." || filepath.IsLocal(rel), "result %s is not under input %s", short(p), short(input))
	parent, err := filepath.EvalSymlinks(filepath.Dir(p))
	require.NoError(t, err)
	require.True(t, a.allowedName(filepath.Join(parent, filepath.Base(p)), false), "result %s of %s is not allowed", short(p), short(input))
}

func TestAttackCorpusNeverEscapes(t *testing.T) {
	for _, mode := range []struct {
		name     string
		portable bool
	}{{"proc fd path", false}, {"portable fallback", true}} {
		t.Run(mode.name, func(t *testing.T) {
			a := newAttackFixture(t, mode.portable)
			inputs := attackInputs(a)
			require.GreaterOrEqual(t, len(inputs), 200)
			before := snapshot(t, a.base)
			ctx := context.Background()
			ops := attackOps()
			succeeded := map[string]int{}
			for _, in := range inputs {
				for _, op := range ops {
					if op.run(ctx, a, t, in) {
						succeeded[op.name]++
					}
				}
			}
			t.Logf("%d inputs × %d operations = %d attempts; succeeded (allowed) per op: %v",
				len(inputs), len(ops), len(inputs)*len(ops), succeeded)

			// No write landed outside the allowed area, and nothing
			// forbidden or link-shaped changed.
			after := snapshot(t, a.base)
			for p, v := range before {
				if !a.allowedReal(p, true) || strings.Contains(v, " -> ") {
					require.Equal(t, v, after[p], "%s changed", p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					require.True(t, a.allowedReal(p, true), "new file %s outside the allowed area", p)
				}
			}
			_, err := os.Lstat(filepath.Join("/etc", probeName))
			require.ErrorIs(t, err, fs.ErrNotExist, "a write escaped to /etc")
			// Every op on every input ran, and some were allowed: the
			// corpus exercises both sides.
			for _, op := range ops {
				require.NotZero(t, succeeded[op.name], op.name)
			}
		})
	}
}

// TestAttackCorpusRefusalsArePermissionDenied checks the error class for
// the inputs whose only problem is the policy: they must be refused with
// *policy.PathError, never reported as missing files.
func TestAttackCorpusRefusalsArePermissionDenied(t *testing.T) {
	a := newAttackFixture(t, false)
	ctx := context.Background()
	for _, p := range []string{
		a.root + "/.git/config", a.root + "/cfg", a.root + "/gitlink/config", a.root + "/self/.git/config",
		a.root + "/rel-out/secret", a.root + "/abs-file", a.root + "/trail/secret", a.root + "/etclink/passwd",
		a.root + "/../root-evil/secret", a.root + "-evil/secret", a.root + "/hl", a.root + "/deepgit/config",
		a.root + "/sub/subgit/config", a.root + "/extralink/.env", a.root + "/.GIT/config", "/etc/passwd",
		a.root + "/a.txt\x00", "relative/a.txt",
	} {
		_, err := a.fs.ReadTextFile(ctx, p, 0, 0)
		require.ErrorIs(t, err, policy.ErrPermissionDenied, "%q", p)
		var pe *policy.PathError
		require.True(t, errors.As(err, &pe))
		require.Equal(t, p, pe.Path)
	}
}
