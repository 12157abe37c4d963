package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CommandEnv is the base environment of commands (TerminalOptions.Env):
// path as PATH, the agent's HOME (or "/"), LANG=C.UTF-8, TERM=dumb, then
// extra ("NAME=value", the user's configured variables) in order. On
// Windows, the variables Windows programs need to start (SystemRoot,
// PATHEXT, the profile directories, TEMP, ...) replace HOME, LANG and
// TERM. A
// LocalTerminal still removes the names that look like secrets.
func CommandEnv(path string, extra []string) []string {
	if base := platformBaseEnv(); base != nil {
		// Windows: the variables its programs need to start, then PATH.
		return append(append(base, "PATH="+path), extra...)
	}
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		home = "/"
	}
	env := []string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb"}
	return append(env, extra...)
}

// secretMarkers are substrings of variable names that usually hold
// credentials.
var secretMarkers = []string{
	"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
	"PRIVATE_KEY", "ACCESS_KEY", "AUTH", "COOKIE", "DSN",
}

// IsSecretName reports whether a variable name looks like it holds a
// credential: commands never get such variables.
func IsSecretName(name string) bool { return isSecretName(name) }

func isSecretName(name string) bool {
	u := strings.ToUpper(name)
	for _, m := range secretMarkers {
		if strings.Contains(u, m) {
			return true
		}
	}
	return strings.HasSuffix(u, "_KEY") || strings.HasSuffix(u, "_PAT")
}

// systemDirs are the directories of the PATH a desktop session gives
// programs it starts (launchd on macOS, a Linux session manager): a PATH
// made of them only has none of the user's toolchains.
var systemDirs = map[string]bool{
	"/usr/bin": true, "/bin": true, "/usr/sbin": true, "/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true, "/usr/games": true,
	"/usr/local/games": true, "/snap/bin": true,
}

// MinimalPath reports whether path is what an application launched from a
// desktop (the macOS Dock, Finder, a Linux launcher) inherits: empty, or
// only the system directories, without any the user's shell adds
// (Homebrew, ~/go/bin, ~/.cargo/bin, nvm, pyenv). Editors read the login
// shell's environment in that case; so does the agent.
func MinimalPath(path string) bool {
	for _, e := range filepath.SplitList(path) {
		if e != "" && !systemDirs[filepath.Clean(e)] {
			return false
		}
	}
	return true
}

// LoginShellTimeout bounds LoginShellPath.
const LoginShellTimeout = 5 * time.Second

// pathMarker brackets the PATH in the shell's output: interactive start-up
// files may print anything around it.
const pathMarker = "_ACP_AGENT_PATH_7f3c_"

// LoginShellPath asks the user's login shell for its PATH, as editors do
// for a GUI launch: shell -l -i -c prints it between markers, with stdin
// from /dev/null and the agent's environment, in its own process group,
// killed when timeout (0: LoginShellTimeout) or ctx ends. shell must be
// an absolute path (the user's $SHELL).
func LoginShellPath(ctx context.Context, shell string, timeout time.Duration) (string, error) {
	if !filepath.IsAbs(shell) {
		return "", fmt.Errorf("login shell %q is not an absolute path", shell)
	}
	if timeout <= 0 {
		timeout = LoginShellTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-l", "-i", "-c", `printf '%s%s%s' '`+pathMarker+`' "$PATH" '`+pathMarker+`'`)
	var out bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &out, max: 1 << 20}
	cmd.Dir = "/"
	if home := os.Getenv("HOME"); filepath.IsAbs(home) {
		cmd.Dir = home
	}
	setProcessGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("login shell %s did not answer within %s", shell, timeout)
	}
	_, rest, ok := bytes.Cut(out.Bytes(), []byte(pathMarker))
	path, _, ok2 := bytes.Cut(rest, []byte(pathMarker))
	if !ok || !ok2 {
		if err == nil {
			err = errors.New("no PATH in its output")
		}
		return "", fmt.Errorf("login shell %s: %w", shell, err)
	}
	p := strings.TrimSpace(string(path))
	if p == "" {
		return "", fmt.Errorf("login shell %s: empty PATH", shell)
	}
	return p, nil
}

// MergePaths is first's entries, then those of second it does not have.
func MergePaths(first, second string) string {
	seen := map[string]bool{}
	var out []string
	for _, e := range append(filepath.SplitList(first), filepath.SplitList(second)...) {
		if e == "" || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e)
	}
	return strings.Join(out, string(filepath.ListSeparator))
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
