package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forgeListing is what a hostile repository ships and a prompt-injected
// model runs: "bash forge.sh CACHE ROOT DIR..." writes, in the directory
// CACHE, the sandbox helpers' kept listing of the workspace ROOT (the file
// named for it, in the format the helpers keep) in which each DIR, with
// its device, inode and times as they are now, holds no .env file; its
// checksum is valid. A helper that trusted it would mask nothing in DIR.
const forgeListing = `set -e
cache=$1 root=$2; shift 2
name=$(printf %s "$root" | sha256sum | cut -c1-32)
tmp=$(mktemp)
printf 'acp-agent secrets scan 1\n' > "$tmp"
for d in "$@"; do
  read -r dev ino ms cs < <(stat -c '%d %i %Y %Z' "$d")
  mn=$(stat -c %y "$d"); mn=${mn#*.}; mn=${mn%% *}
  cn=$(stat -c %z "$d"); cn=${cn#*.}; cn=${cn%% *}
  printf '%s\0%s %s %s %s %s %s 0 0 0\0' "$d" "$dev" "$ino" "$ms" "$mn" "$cs" "$cn" >> "$tmp"
done
printf "$(sha256sum "$tmp" | cut -c1-64 | sed 's/../\\x&/g')" >> "$tmp"
mkdir -p "$cache"
cat "$tmp" > "$cache/$name"
echo "planted $cache/$name"
`

// A command cannot make a later command's sandbox trust a listing of the
// .env files that omits one (docs/security.md, "The sandbox"): through
// the built binary, in every mode, a command with the home directory as
// its workspace plants forged listings (valid checksum, the directory's
// real times) wherever it can write — a session directory inside the
// workspace, one under a toolchain cache commands may write (~/.cache),
// one reached through a symlink into the workspace — and goes at the real
// cache under the default session directory: written straight, with its
// directories renamed away or swapped for symlinks (EBUSY: pinned; or no
// rights around them), hard-linked out to be rewritten in place, and
// through the agent's and the helper's /proc/<pid>/root. A later agent
// process in the workspace, with each of those session directories, still
// cannot read the .env. The control: the same planted file, copied into
// the real cache by the user, is trusted (the secret is read), so what
// keeps the secret in the attacks is that the helpers read no listing
// from where a command could have written it.
func TestBinaryPlantedSecretsListingIsNeverTrusted(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	if goruntime.GOOS != "linux" {
		t.Skip("the helpers keep their listing on Linux")
	}
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			plantedListingAttacks(t, m)
		})
	}
}

func plantedListingAttacks(t *testing.T, m sandboxMode) {
	home := userDir(t, m)
	ws := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	write(t, filepath.Join(ws, "sub", ".env"), "PLANTED_LISTING_SECRET\n")
	write(t, filepath.Join(ws, "sub", "file.txt"), "ordinary\n")
	write(t, filepath.Join(ws, "forge.sh"), forgeListing)
	// The user's state: the default session directory, and one of their
	// session directories linked into the project.
	state := filepath.Join(home, ".local", "state", "acp-agent", "sessions")
	// (In directories of their own: where masks by mount are off, nothing
	// can be created in a directory above a .env.)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "state", "linked"), 0o755))
	linked := filepath.Join(home, "link-sessions")
	require.NoError(t, os.Symlink(filepath.Join(ws, "state", "linked"), linked))
	chownTree(t, m, home)
	rws, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(rws))
	name := hex.EncodeToString(sum[:16])
	sub := filepath.Join(rws, "sub")
	// Listed after the racy window: the first process keeps its listing,
	// which the attacks then go at.
	time.Sleep(2200 * time.Millisecond)
	cat := "cat sub/.env sub/file.txt; echo END"
	out := keptSecretsTurn(t, m, ws, home, state, cat)
	require.Contains(t, out, "ordinary", "%s", out)
	require.NotContains(t, out, "PLANTED_LISTING_SECRET")
	kept := filepath.Join(state, ".secrets-cache", name)
	require.FileExists(t, kept, "the helpers keep the workspace's listing there")

	writable := map[string]string{
		"inside the workspace":  filepath.Join(ws, "state", "sessions"),
		"under ~/.cache":        filepath.Join(home, ".cache", "acp", "sessions"),
		"linked into workspace": linked,
	}
	// forge's cache is quoted already.
	forge := func(cache string) string {
		return "bash " + shq(filepath.Join(ws, "forge.sh")) + " " + cache + " " + shq(rws) + " " + shq(sub)
	}
	var attack []string
	for _, s := range writable {
		attack = append(attack, forge(shq(filepath.Join(s, ".secrets-cache"))))
	}
	realCache := filepath.Join(state, ".secrets-cache")
	attack = append(attack,
		// Straight.
		forge(shq(realCache)),
		// Through the other processes' roots, outside this command's
		// mount namespace: the helper's and the agent's.
		`agent=$(awk '/^PPid:/{print $2}' /proc/$PPID/status)`,
		"for p in $PPID $agent; do "+forge("/proc/$p/root"+shq(realCache))+"; done",
		// Hard-linked out, to be rewritten in place.
		"ln "+shq(filepath.Join(realCache, name))+" "+shq(filepath.Join(home, "handle"))+" && cat "+
			shq(filepath.Join(writable["under ~/.cache"], ".secrets-cache", name))+" > "+shq(filepath.Join(home, "handle")),
	)
	// Renamed away, a new directory in its place; or swapped for a
	// symlink to one the command made.
	for _, a := range []string{filepath.Join(home, ".local"), filepath.Join(home, ".local", "state"),
		filepath.Join(home, ".local", "state", "acp-agent"), state, realCache} {
		attack = append(attack,
			"mv "+shq(a)+" "+shq(a+".old")+" && "+forge(shq(realCache)),
			"mv "+shq(a)+" "+shq(a+".moved")+" && mkdir -p "+shq(a+".evil")+" && ln -s "+shq(a+".evil")+" "+shq(a)+" && "+forge(shq(realCache)))
	}
	attack = append(attack, "echo END")
	// The user opened their home directory: commands may write all of it
	// but the denied paths.
	out = keptSecretsTurn(t, m, home, home, state, strings.Join(attack, "\n"))
	require.Contains(t, out, "END", "%s", out)
	for _, s := range writable {
		// The attacks that must land, or this test attacks nothing.
		require.FileExists(t, filepath.Join(s, ".secrets-cache", name), "%s", out)
	}

	for what, s := range map[string]string{
		"inside the workspace":   writable["inside the workspace"],
		"under ~/.cache":         writable["under ~/.cache"],
		"linked into workspace":  linked,
		"renamed, linked, /proc": state,
	} {
		out := keptSecretsTurn(t, m, ws, home, s, cat)
		require.Contains(t, out, "END", "%s", out)
		require.Contains(t, out, "ordinary", "the command ran and could read")
		assert.NotContains(t, out, "PLANTED_LISTING_SECRET",
			"mode %s: a listing planted %s hid the .env from the sandbox", m.name, what)
	}

	// The control: the planted file is one the helpers trust where only
	// the user writes.
	planted, err := os.ReadFile(filepath.Join(writable["under ~/.cache"], ".secrets-cache", name))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(kept, planted, 0o600))
	chownTree(t, m, kept)
	out = keptSecretsTurn(t, m, ws, home, state, cat)
	require.Contains(t, out, "PLANTED_LISTING_SECRET",
		"the planted listing is not one the helpers would trust anywhere, so the attacks above prove nothing: %s", out)
}

// shq quotes s for bash.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// The agent's own paths named relative to its directory (--session-dir,
// --log-file; here the workspace) are denied to commands like absolute
// ones, in every mode: a command runs (the helpers take absolute paths
// only, and refused every command when given these as written) and
// cannot read the sessions, the listing kept with them or the log.
func TestBinaryRelativeAgentPathsAreDeniedToCommands(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir, home := userDir(t, m), userDir(t, m)
			write(t, filepath.Join(dir, "file.txt"), "ordinary\n")
			chownTree(t, m, dir)
			run := func(command string) string {
				return sandboxedTurn(t, m, dir, home, command, "--session-dir", "state/sessions", "--log-file", "agent.log", "--log-level", "debug")
			}
			run("true")
			require.FileExists(t, filepath.Join(dir, "agent.log"))
			// The first line of each (the exec client shows a few lines).
			out := run("cat file.txt; head -qn1 state/sessions/*.jsonl; head -n1 agent.log; ls state/sessions; echo END")
			require.Contains(t, out, "ordinary", "the command ran: %s", out)
			require.Contains(t, out, "END")
			assert.NotContains(t, out, `{"type":"session"`, "a command read the agent's sessions")
			assert.NotContains(t, out, "level=", "a command read the agent's log")
			assert.NotRegexp(t, `[0-9a-f]{8}-[0-9a-f-]+\.jsonl`, out, "a command listed the agent's sessions")
		})
	}
}
