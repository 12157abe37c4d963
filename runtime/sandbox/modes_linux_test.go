//go:build linux

package sandbox

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The sandbox behaves differently for root (it may mount: masks by
// mount), for another user where user namespaces work (helpers in one of
// their own: masks by mount too) and where they do not (the fallback:
// Landlock grants around every denied path). Tests and CI run as root,
// so TestSuiteAsNobody runs this package's tests again as nobody, once
// with masks by mount and once in the fallback (the test binary copied
// where nobody can run it, the mode in the environment), and
// forEachMode runs a mode-sensitive test's body in both modes in this
// process.

// mode is how a test body's commands are confined.
type mode struct {
	name string
	// masks: denied paths are masked by mount (root, or a user
	// namespace); otherwise they are granted around.
	masks bool
}

const (
	// modeEnv names, in the test binary re-executed as nobody, the mode
	// its tests run in.
	modeEnv = "ACP_SANDBOX_TEST_MODE"
	// nobodyID is the user the non-root runs use.
	nobodyID = 65534
)

// forEachMode runs body with masks by mount ("masks", where this
// machine gives them) and without ("fallback"); in the suite re-run as
// nobody, in that run's mode only.
func forEachMode(t *testing.T, body func(t *testing.T, m mode)) {
	t.Helper()
	if name := os.Getenv(modeEnv); name != "" {
		body(t, mode{name: name, masks: os.Getenv(mountsEnv) == ""})
		return
	}
	t.Run("masks", func(t *testing.T) {
		if st := Probe(); st.Masks == "" {
			t.Skip("no masks by mount here:", st.Limit)
		}
		body(t, mode{name: "masks", masks: true})
	})
	t.Run("fallback", func(t *testing.T) {
		t.Setenv(mountsEnv, "off")
		body(t, mode{name: "fallback"})
	})
}

// Every test of this package again as nobody: with masks by mount (the
// helpers in user namespaces of their own) and in the fallback. Tests
// and CI run as root, where neither happens otherwise.
func TestSuiteAsNobody(t *testing.T) {
	if os.Getenv(modeEnv) != "" {
		t.Skip("this is the run as nobody")
	}
	if os.Geteuid() != 0 {
		t.Skip("the tests run as uid", os.Geteuid(), "already: the whole suite is the non-root run")
	}
	if st := Probe(); !st.Available {
		t.Skip("no sandbox on this kernel:", st.Reason)
	}
	for _, name := range []string{"nonroot-masks", "nonroot-fallback"} {
		t.Run(name, func(t *testing.T) {
			if name == "nonroot-masks" {
				// The machine's to say, not the package's: can nobody make
				// a user namespace and mount in it?
				cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", "mount", "-t", "tmpfs", "none", "/tmp")
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Skipf("nobody cannot mount in a user namespace here (unshare: %v: %s)", err, out)
				}
			}
			env := []string{modeEnv + "=" + name}
			if name == "nonroot-fallback" {
				env = append(env, mountsEnv+"=off")
			}
			out := runAsNobody(t, env, "-test.skip=^TestSuiteAsNobody$")
			if name == "nonroot-masks" {
				// The mode-sensitive tests did run with masks.
				require.Contains(t, out, "--- PASS: TestNewFilesBesideGitAndEnvFiles", "%s", out)
			}
			var skipped []string
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "--- SKIP: ") {
					skipped = append(skipped, strings.TrimSpace(line))
				}
			}
			t.Logf("as nobody (%s): %d tests passed; skipped: %v", name, strings.Count(out, "--- PASS: "), skipped)
		})
	}
}

var nobodyBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// nobodyTestBinary is a copy of this test binary that nobody can run.
func nobodyTestBinary(t *testing.T) string {
	t.Helper()
	nobodyBin.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			nobodyBin.err = err
			return
		}
		dir, err := os.MkdirTemp("", "acp-sandbox-nobody-")
		if err != nil {
			nobodyBin.err = err
			return
		}
		nobodyBin.dir = dir
		if err := os.Chmod(dir, 0o755); err != nil {
			nobodyBin.err = err
			return
		}
		src, err := os.Open(exe)
		if err != nil {
			nobodyBin.err = err
			return
		}
		defer src.Close()
		nobodyBin.path = filepath.Join(dir, "sandbox.test")
		dst, err := os.OpenFile(nobodyBin.path, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			nobodyBin.err = err
			return
		}
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		nobodyBin.err = err
	})
	require.NoError(t, nobodyBin.err, "copying the test binary for nobody")
	return nobodyBin.path
}

func init() {
	// Like the agent (cmd/acp-agent), the process that starts helpers is
	// not dumpable: its helpers' /proc files are root's until they exec.
	beforeTests = append(beforeTests, func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) })
	// The copy goes when the tests end.
	afterTests = append(afterTests, func() {
		if nobodyBin.dir != "" {
			os.RemoveAll(nobodyBin.dir)
		}
	})
}

// runAsNobody runs the test binary as nobody, in a temporary directory
// of nobody's, with env added and args, and returns its output; it fails
// the test with the output if the run failed.
func runAsNobody(t *testing.T, env []string, args ...string) string {
	t.Helper()
	bin := nobodyTestBinary(t)
	tmp, err := os.MkdirTemp("", "acp-sandbox-nobody-tmp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	require.NoError(t, os.Chown(tmp, nobodyID, nobodyID))
	// The tests read testdata/ from their directory and the repository's
	// (../../testdata): the same layout, in a place nobody can read.
	pkg := filepath.Join(tmp, "runtime", "sandbox")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.CopyFS(filepath.Join(pkg, "testdata"), os.DirFS("testdata")))
	require.NoError(t, os.CopyFS(filepath.Join(tmp, "testdata"), os.DirFS(filepath.Join("..", "..", "testdata"))))
	cmd := exec.Command(bin, append([]string{"-test.count=1", "-test.v", "-test.timeout=5m"}, args...)...)
	cmd.Dir = pkg
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + tmp, "TMPDIR=" + tmp, "GORACE=atexit_sleep_ms=0"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "=== RUN") {
		t.Skipf("this machine cannot run the test binary as nobody (uid %d): %v\n%s", nobodyID, err, out)
	}
	if err != nil || !strings.Contains(string(out), "\nPASS\n") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	return string(out)
}
