//go:build linux

package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeDigest hashes every file's path, mode and content under dir, so a
// test sees any change a command made there.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", p, info.Mode())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	}))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// gitWorkspace makes a git repository at dir with a commit, a .env at
// its top and a .env.local in app/, and returns the secrets by path.
func gitWorkspace(t *testing.T, dir string) map[string]string {
	t.Helper()
	secrets := map[string]string{".env": "ROOT_ENV_SECRET", "app/.env.local": "APP_ENV_SECRET"}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("readme\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".env*\n"), 0o644))
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "first"}} {
		git := exec.Command("git", args...)
		git.Dir = dir
		git.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}
		out, err := git.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	for p, c := range secrets {
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c+"\n"), 0o600))
	}
	return secrets
}

var outcome = regexp.MustCompile(`(?m)^RESULT (\S+) (yes|no)$`)

// results runs script's cases, each "name<TAB>command", and returns
// whether each succeeded; everything the commands print goes to the
// output too (for the secrets check).
func caseScript(cases []string) string {
	var b strings.Builder
	for _, c := range cases {
		name, cmd, _ := strings.Cut(c, "\t")
		fmt.Fprintf(&b, "if ( %s ) </dev/null 2>&1; then echo 'RESULT %s yes'; else echo 'RESULT %s no'; fi\n", cmd, name, name)
	}
	return b.String()
}

func outcomes(out string) map[string]bool {
	res := map[string]bool{}
	for _, m := range outcome.FindAllStringSubmatch(out, -1) {
		res[m[1]] = m[2] == "yes"
	}
	return res
}

// The review's finding: with the denied paths granted around, a
// non-root agent's commands could create nothing directly in a git
// root or in any directory holding a .env (npm install, go mod init,
// mkdir build). Where the helper may mount (root, or a user namespace of
// its own), they can, in every mode .git stays unwritable and .env
// unreadable however a command goes at them, and the fallback keeps its
// documented limit.
func TestNewFilesBesideGitAndEnvFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	forEachMode(t, func(t *testing.T, m mode) {
		l, pol := newTestLauncher(t)
		ws := pol.WritableRoots[0]
		secrets := gitWorkspace(t, ws)
		gitBefore := treeDigest(t, filepath.Join(ws, ".git"))
		// A process of the commands' own user outside the sandbox, with
		// the workspace as its directory: its /proc root and cwd lead to
		// the workspace without the masks.
		outsider := exec.Command("sleep", "60")
		outsider.Dir = ws
		require.NoError(t, outsider.Start())
		t.Cleanup(func() { _ = outsider.Process.Kill(); _ = outsider.Wait() })
		op := strconv.Itoa(outsider.Process.Pid)

		creates := []string{
			"create-file-in-git-root\ttouch newfile",
			"create-dir-in-git-root\tmkdir newdir && touch newdir/x",
			"npm-like-install\tmkdir -p node_modules/pkg && echo '{}' > node_modules/pkg/package.json",
			"go-mod-init-like\techo 'module x' > go.mod",
			"rename-in-git-root\tmv newfile renamed",
			"create-file-beside-env\ttouch app/new.txt",
			"create-dir-beside-env\tmkdir app/build && touch app/build/out",
		}
		gitWrites := []string{
			"git-write-config\techo '[core] hooksPath = /tmp' >> .git/config",
			"git-create-hook\techo 'echo pwned' > .git/hooks/pre-commit",
			"git-mkdir\tmkdir .git/hooks/x",
			"git-rename-into\techo x > f1; mv f1 .git/f1",
			"git-link-into\techo x > f2; ln f2 .git/f2",
			"git-delete\trm .git/description",
			"git-rename-inside\tmv .git/HEAD .git/HEAD.old",
			"git-rename-itself\tmv .git gitdir",
			"git-remove-all\trm -rf .git; test ! -e .git",
			"git-truncate\ttruncate -s 0 .git/HEAD",
			"git-umount\tpython3 -c 'import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); sys.exit(0 if l.umount2(b\".git\", 2) == 0 else 1)'",
		}
		// The secrets' reads: none of these may print a secret; the
		// cases report whether the command itself succeeded.
		reads := []string{
			"env-cat\tcat .env app/.env.local",
			"env-cp\tcp .env stolen && cat stolen",
			"env-hardlink\tln .env hard && cat hard",
			"env-symlink\tln -s .env soft && cat soft",
			"env-dotdot\tcat ./app/../.env /proc/self/cwd/.env \"$PWD/.env\"",
			"env-rename-away\tmv .env moved && cat moved",
			"env-delete\trm .env",
			"env-chmod\tchmod 644 .env && cat .env",
			"env-umount\tpython3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); l.umount2(b\".env\", 0); l.umount2(b\".env\", 2)'; cat .env",
			"env-opath-fd\tpython3 -c 'import os; fd=os.open(\".env\", os.O_PATH); print(open(\"/proc/self/fd/%d\" % fd).read())'",
			"env-link-fd\tpython3 -c 'import os; fd=os.open(\".env\", os.O_PATH); os.link(\"/proc/self/fd/%d\" % fd, \"viafd\", follow_symlinks=True)' && cat viafd",
			"env-helper-root\tcat /proc/$PPID/root$PWD/.env",
			// The helper's threads by id (its task list is not readable):
			// the one that forked the command is in the command's mount
			// namespace, the others in the unmasked one.
			"env-helper-threads\tfor i in $(seq $PPID $((PPID+64))); do cat /proc/$i/root$PWD/.env /proc/$PPID/task/$i/root$PWD/.env; done 2>/dev/null | grep .",
			"env-outsider-root\tcat /proc/" + op + "/root$PWD/.env",
			"env-outsider-cwd\tcat /proc/" + op + "/cwd/.env",
			"env-dd-tar-grep\tdd if=.env 2>/dev/null; tar cf - .env app | tar xOf - | grep SECRET; grep -r SECRET .",
			// A directory holding a .env cannot move (the next command's
			// scan could miss it while it moves).
			"env-dir-renamed\tmv app app2 && cat app2/.env.local",
			"env-dir-renamed-deeper\tmkdir -p x/y && echo z > x/y/.env && mv x x2",
		}
		script := caseScript(creates) + caseScript(gitWrites) + caseScript(reads) +
			caseScript([]string{"ls-lists-env\tls -a | grep -qx .env", "git-status\tgit status --short"}) +
			"grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status\n"
		p, outc := start(t, l, pol, script)
		_, err := p.Wait()
		require.NoError(t, err)
		out := string(<-outc)
		res := outcomes(out)
		require.Len(t, res, len(creates)+len(gitWrites)+len(reads)+2, "every case reported:\n%s", out)
		// No capabilities at all, also where the helper holds some in a
		// user namespace of its own; the bounding set is emptied where
		// the helper may (root, or its own namespace).
		for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
			assert.Regexp(t, `(?m)^`+c+`:\s+0+$`, out, "the command kept capabilities (mode %s)", m.name)
		}
		if m.masks || os.Geteuid() == 0 {
			assert.Regexp(t, `(?m)^CapBnd:\s+0+$`, out, "mode %s", m.name)
		}
		assert.Regexp(t, `(?m)^NoNewPrivs:\s+1$`, out)
		assert.Regexp(t, `(?m)^Seccomp:\s+2$`, out)
		if m.masks {
			require.True(t, p.Masked(), "the helper did not mask by mount in mode %s", m.name)
		} else {
			require.False(t, p.Masked(), "masks by mount are off in mode %s", m.name)
		}
		if m.masks {
			// Files keep their owner: the agent's user.
			var st syscall.Stat_t
			require.NoError(t, syscall.Stat(filepath.Join(ws, "renamed"), &st))
			assert.Equal(t, uint32(os.Geteuid()), st.Uid)
			assert.Equal(t, uint32(os.Getegid()), st.Gid)
		}
		for _, c := range creates {
			name, _, _ := strings.Cut(c, "\t")
			if m.masks {
				assert.True(t, res[name], "%s: a new file beside .git or a .env (mode %s)\n%s", name, m.name, out)
			} else {
				// The fallback's documented limit.
				assert.False(t, res[name], "%s succeeded in the fallback", name)
			}
		}
		for _, c := range gitWrites {
			name, _, _ := strings.Cut(c, "\t")
			assert.False(t, res[name], "%s: .git was written (mode %s)", name, m.name)
		}
		assert.True(t, res["ls-lists-env"], "the root stays listable")
		assert.True(t, res["git-status"], "git status works inside:\n%s", out)
		for _, s := range secrets {
			assert.NotContains(t, out, s, "a command read a secrets file (mode %s)", m.name)
		}
		assert.False(t, res["env-dir-renamed"], "a directory holding a .env moved (mode %s)", m.name)
		if m.masks {
			// A .env the command made itself is its own to read and
			// move: it was not there when the sandbox looked.
			assert.True(t, res["env-dir-renamed-deeper"], "%s", out)
		}
		assert.Equal(t, gitBefore, treeDigest(t, filepath.Join(ws, ".git")), ".git changed")
		for p, s := range secrets {
			data, err := os.ReadFile(filepath.Join(ws, p))
			require.NoError(t, err, "%s is gone", p)
			assert.Equal(t, s+"\n", string(data))
		}

		// The next command finds a .env the user made between the
		// commands, and one a command made and moved.
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "newdir"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "newdir", ".env"), []byte("LATE_ENV_SECRET\n"), 0o600))
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "x2", "y"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "x2", "y", ".env"), []byte("MOVED_ENV_SECRET\n"), 0o600))
		out2, _, err := run(t, l, pol, "cat app/.env.local newdir/.env x2/y/.env; mv x2 x3; cat x3/y/.env; touch newdir/again && echo CREATED-AGAIN")
		require.NoError(t, err)
		for _, s := range []string{"APP_ENV_SECRET", "LATE_ENV_SECRET", "MOVED_ENV_SECRET"} {
			assert.NotContains(t, out2, s)
		}
		if m.masks {
			assert.Contains(t, out2, "CREATED-AGAIN", "a directory that just got a .env stays writable")
		}
	})
}

// A command cannot hide a .env from the next command's scan by making
// its directory unreadable (chmod 000, which Landlock does not govern)
// and readable again in the next command: a helper in a user namespace
// reads the directory anyway, and one that cannot treats an unreadable
// directory as denied.
func TestAnUnreadableDirectoryHidesNoEnvFile(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		l, pol := newTestLauncher(t)
		ws := pol.WritableRoots[0]
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "app", "deep"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "app", "deep", ".env"), []byte("HIDDEN_ENV_SECRET\n"), 0o600))
		t.Cleanup(func() { _ = os.Chmod(filepath.Join(ws, "app"), 0o755) })
		out, _, err := run(t, l, pol, "chmod 000 app && echo HIDDEN")
		require.NoError(t, err)
		require.Contains(t, out, "HIDDEN", "chmod is not the sandbox's to refuse")
		out, _, err = run(t, l, pol, "chmod 755 app; cat app/deep/.env; cp app/deep/.env x && cat x")
		require.NoError(t, err)
		assert.NotContains(t, out, "HIDDEN_ENV_SECRET", "mode %s", m.name)
	})
}

// While a command tries to rename a directory holding a .env back and
// forth, the commands that start meanwhile never read the .env: the scan
// is not atomic, so a directory moved while it runs could be missed; the
// directories holding a .env are pinned (bound onto themselves) in every
// command that cannot read it, so none can move, and the helper checks
// that what it masks is what its scan found there.
func TestARenameRaceNeverUnmasksAnEnvFile(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		l, pol := newTestLauncher(t)
		ws := pol.WritableRoots[0]
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "a", "b", ".env"), []byte("RACED_ENV_SECRET\n"), 0o600))
		// The renamer: its own masks move with the directories.
		stop := filepath.Join(pol.TempDir, "stop")
		renamer, renOut := start(t, l, pol, "end=$(($(date +%s)+20)); n=0; while [ ! -e "+stop+" ] && [ $(date +%s) -lt $end ]; do "+
			"mv a c 2>/dev/null; mv c a 2>/dev/null; mv a/b a/d 2>/dev/null; mv a/d a/b 2>/dev/null; n=$((n+1)); done; echo RENAMES $n")
		started, refused := 0, 0
		for range 120 {
			devNull, err := os.Open(os.DevNull)
			require.NoError(t, err)
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			req := Request{Policy: pol, Path: "/bin/sh", Env: []string{"PATH=/usr/bin:/bin"}, Dir: ws,
				Argv: []string{"sh", "-c", "cat a/b/.env a/d/.env c/b/.env c/d/.env 2>/dev/null"}}
			p, err := l.Start(req, []*os.File{devNull, pw, pw})
			devNull.Close()
			pw.Close()
			if err != nil {
				pr.Close()
				require.Contains(t, err.Error(), "kept moving")
				refused++
				continue
			}
			data, _ := io.ReadAll(pr)
			pr.Close()
			_, err = p.Wait()
			require.NoError(t, err)
			started++
			assert.NotContains(t, string(data), "RACED_ENV_SECRET", "a command read the .env while its directory moved (mode %s)", m.name)
		}
		require.NoError(t, os.WriteFile(stop, nil, 0o644))
		_, err := renamer.Wait()
		require.NoError(t, err)
		t.Logf("mode %s: %d commands ran, %d refused while the directories moved; renamer: %s", m.name, started, refused, strings.TrimSpace(string(<-renOut)))
	})
}

// Where a helper cannot start in a user namespace (a container's filter
// refusing them; here an ambient capability the kernel refuses), the
// launcher starts it without one and the commands are confined by the
// fallback, not left unconfined, and later helpers do not try again.
func TestAHelperThatCannotEnterAUserNamespaceFallsBack(t *testing.T) {
	if hasCapSysAdmin() {
		t.Skip("the agent may mount: its helpers need no user namespace (TestSuiteAsNobody runs this as nobody)")
	}
	if mountsTurnedOff() {
		t.Skip("masks by mount are off: no helper tries a user namespace")
	}
	old := helperCaps
	helperCaps = append(slices.Clone(old), 63) // no such capability
	t.Cleanup(func() { helperCaps = old })
	l, pol := newTestLauncher(t)
	ws := pol.WritableRoots[0]
	require.NoError(t, os.Mkdir(filepath.Join(ws, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("NO_USERNS_ENV_SECRET\n"), 0o600))
	for range 2 {
		p, outc := start(t, l, pol, "cat .env; echo x > .git/config; touch made && echo MADE; echo RAN")
		_, err := p.Wait()
		require.NoError(t, err)
		out := string(<-outc)
		assert.False(t, p.Masked())
		assert.Contains(t, out, "RAN")
		assert.NotContains(t, out, "NO_USERNS_ENV_SECRET")
		assert.NotContains(t, out, "MADE", "the fallback's limit")
		assert.True(t, l.noUserns.Load(), "the launcher remembers")
	}
	data, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	assert.True(t, os.IsNotExist(err), "%s", data)
}
