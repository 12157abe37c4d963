package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One table of paths, two sandboxes: the real Landlock one, probed by a
// confined command here, and the Seatbelt profile generated from the
// same policy, read by the SBPL evaluator. They must grant the same reads
// and writes, except where the difference is known and documented
// (docs/platforms.md): Landlock cannot express those rules, so Linux is
// the stricter side in each.
func TestLinuxAndMacOSPoliciesGrantTheSame(t *testing.T) {
	l, _ := newTestLauncher(t)
	base := t.TempDir()
	mk := func(rel, content string) string {
		p := filepath.Join(base, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if content != "" {
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		} else {
			require.NoError(t, os.MkdirAll(p, 0o755))
		}
		return p
	}
	root := mk("work/repo", "")
	mk("work/repo/.git/config", "[core]\n")
	mk("work/repo/src/main.go", "package main\n")
	mk("work/repo/README.md", "hi\n")
	mk("work/repo/.env", "SECRET\n")
	mk("work/repo/src/.env.local", "SECRET\n")
	mk("work/repo/.env.example", "TEMPLATE\n")
	plain := mk("work/plain", "")
	mk("work/plain/x.txt", "x\n")
	mk("outside/o.txt", "o\n")
	mk("home/.ssh/id_ed25519", "SECRET\n")
	mk("home/.netrc", "SECRET\n")
	mk("home/notes.txt", "n\n")
	mk("home/.cache/c.txt", "c\n")
	tmp := mk("tmp", "")
	mk("tmp/t.txt", "t\n")
	pol := Policy{
		WritableRoots: []string{root, plain},
		ExtraWritable: []string{filepath.Join(base, "home/.cache")},
		DeniedPaths:   []string{filepath.Join(base, "home/.ssh"), filepath.Join(base, "home/.netrc")},
		TempDir:       tmp,
	}

	// Each case: a path, and whether it is a file (read it, open it for
	// writing) or a directory (list it, create an entry in it).
	cases := []string{
		"work/repo/src/main.go", "work/repo/README.md", "work/repo/src", "work/repo/.git/config",
		"work/repo/.git", "work/repo/.env", "work/repo/src/.env.local", "work/repo/.env.example", "work/repo", "work/plain", "work/plain/x.txt", "outside/o.txt", "outside",
		"home/.ssh/id_ed25519", "home/.ssh", "home/.netrc", "home/notes.txt", "home",
		"home/.cache/c.txt", "home/.cache", "tmp/t.txt", "tmp", "/dev/null", "/etc/hostname", "/etc",
	}
	abs := func(c string) string {
		if strings.HasPrefix(c, "/") {
			return c
		}
		return filepath.Join(base, c)
	}
	var script strings.Builder
	script.WriteString(`probe() { r=0; w=0
  if [ -d "$1" ]; then ls "$1" >/dev/null 2>&1 && r=1; f="$1/.probe-$$"; if { true > "$f"; } 2>/dev/null; then w=1; rm -f "$f"; fi
  else cat "$1" >/dev/null 2>&1 && r=1; { true >> "$1"; } 2>/dev/null && w=1; fi
  echo "$1 $r $w"; }
`)
	for _, c := range cases {
		fmt.Fprintf(&script, "probe '%s'\n", abs(c))
	}
	out, _, err := run(t, l, pol, script.String())
	require.NoError(t, err)
	linux := map[string][2]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 3, out)
		linux[f[0]] = [2]bool{f[1] == "1", f[2] == "1"}
	}

	prof, err := SeatbeltProfile(SeatbeltPolicy(pol, filepath.EvalSymlinks))
	require.NoError(t, err)
	sb, err := parseSBPL(prof)
	require.NoError(t, err)
	mac := func(p string) [2]bool {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			// Listing reads the directory; creating an entry writes the
			// new name.
			return [2]bool{sb.allows("file-read-data", p), sb.allows("file-write-create", filepath.Join(p, ".probe"))}
		}
		return [2]bool{sb.allows("file-read-data", p), sb.allows("file-write-data", p)}
	}

	// Known differences, each Linux-stricter because Landlock can only
	// grant whole hierarchies:
	known := map[string]string{
		// A root holding .git is granted entry by entry (unless .git can
		// be bind-mounted read-only, which needs root and a mount
		// namespace), so new top-level files cannot be created there;
		// Seatbelt excludes .git exactly.
		"work/repo": "new top-level entries of a git root",
		// A directory holding a denied entry is granted entry by entry,
		// so it cannot be listed; Seatbelt denies the entry itself.
		"home": "listing a directory that holds a secret",
		// Without mounts (the fallback) a directory holding a .env file
		// is granted entry by entry too: nothing new can be created in
		// it. Seatbelt denies the file itself.
		"work/repo/src": "new entries of a directory holding a .env file (fallback)",
	}
	for _, c := range cases {
		p := abs(c)
		got, ok := linux[p]
		require.True(t, ok, "no probe result for %s", p)
		want := mac(p)
		if why, isKnown := known[c]; isKnown && got != want {
			t.Logf("%s: Linux %v, macOS %v (known: %s)", c, got, want, why)
			assert.False(t, got[0] && !want[0] || got[1] && !want[1], "%s: Linux must be the stricter side", c)
			continue
		}
		assert.Equal(t, want, got, "%s: [read write] macOS vs Linux", c)
	}
	// The table covers what matters: a secret and .git are protected on
	// both sides.
	assert.Equal(t, [2]bool{false, false}, linux[abs("home/.ssh/id_ed25519")])
	assert.Equal(t, [2]bool{true, false}, linux[abs("work/repo/.git/config")])
	assert.Equal(t, [2]bool{false, false}, linux[abs("work/repo/src/.env.local")])
}
