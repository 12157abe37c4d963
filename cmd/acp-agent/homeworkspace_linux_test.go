package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The everyday work the sandbox must leave alone, in the shape most
// users have it: a workspace under the home directory that is a git
// repository holding another one (a monorepo with a vendored repo), a
// symlinked directory inside it, the home's secret paths missing (no
// ~/.ssh, ~/.aws, ~/.kube, ~/.config/acp-agent: the sandbox keeps them
// from being created) and the toolchains' caches. New files at the top
// of the workspace, in the nested repository, through the symlink, and
// new directories in the caches are made; git works in both
// repositories. Where the sandbox cannot mask .git by mount (the
// fallback), nothing new goes directly in a git root: its known limit.
func TestBinarySandboxEverydayWorkInAWorkspaceUnderHome(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			home := userDir(t, m)
			ws := filepath.Join(home, "src", "mono")
			write(t, filepath.Join(ws, "README.md"), "mono\n")
			write(t, filepath.Join(ws, "packages", "vendored", "lib", "a.go"), "package lib\n")
			write(t, filepath.Join(ws, "packages", "app", "main.go"), "package main\n")
			write(t, filepath.Join(home, ".cache", "go-build", "keep"), "x\n")
			write(t, filepath.Join(home, ".npm", "_cacache", "keep"), "x\n")
			require.NoError(t, os.Symlink("packages/vendored/lib", filepath.Join(ws, "lib")))
			for _, repo := range []string{filepath.Join(ws, "packages", "vendored"), ws} {
				for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "first"}} {
					git := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...)
					git.Dir = repo
					out, err := git.CombinedOutput()
					require.NoError(t, err, "%s", out)
				}
			}
			chownTree(t, m, home)
			steps := map[string]string{
				"top":         "touch NOTES.md && mkdir build && echo x > build/out",
				"nested-repo": "echo x > packages/vendored/new.txt && git -C packages/vendored status --short",
				"subdir":      "echo x > packages/app/new.go && mkdir -p packages/app/internal/x && echo y > packages/app/internal/x/y.go",
				"symlinked":   "echo x > lib/b.go && mkdir lib/sub && echo y > lib/sub/c.go",
				"git":         "git status --short && git log --oneline",
				"caches":      `mkdir -p "$HOME/.cache/newtool" && echo x > "$HOME/.cache/newtool/x" && echo x > "$HOME/.cache/go-build/y" && echo x > "$HOME/.npm/_cacache/y"`,
			}
			var script strings.Builder
			for name, cmd := range steps {
				script.WriteString("if (" + cmd + ") >/dev/null 2>&1; then echo OK:" + name + "; else echo FAILED:" + name + "; fi\n")
			}
			model := promptModel(t, map[string][]modelCall{"[work]": {{"run_command", map[string]any{"command": script.String(), "timeout_seconds": 120}}}})
			conn, sid, _ := sandboxSessionAs(t, m, model, ws, home, "--session-dir", userDir(t, m))
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[work]"))
			out := lastToolResult(t, model.body(t, 1))
			for name := range steps {
				if !m.masks && (name == "top" || name == "nested-repo") {
					continue // the fallback's limit: nothing new in a git root
				}
				assert.Contains(t, out, "OK:"+name, "%s did not work inside the sandbox (mode %s): %s", name, m.name, out)
			}
			for _, p := range []string{".ssh", ".aws", ".kube", ".config/acp-agent"} {
				_, err := os.Lstat(filepath.Join(home, p))
				assert.True(t, os.IsNotExist(err), "%s appeared", p)
			}
		})
	}
}
