package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A denied path that does not exist yet is not one a confined command
// may create. With the home directory as the workspace, a missing
// ~/.ssh became ~/.ssh/config (a Match exec or ProxyCommand line runs a
// program, unconfined, at the user's next ssh or git push), a missing
// agent config directory became ~/.config/acp-agent/config.json (its
// hooks run unconfined, with the agent's API keys, in the next session),
// and a missing ~/.docker/config.json (credential helpers,
// cliPluginsExtraDirs) was created through a symlinked ~/.docker; a
// configured sandbox.deniedPaths entry under a symlinked parent too. The
// sandbox masked only the denied paths that existed and resolved them
// only where they existed. The file tools refused them all along (the
// last part of the test keeps them so). scratch/ stays writable (the
// control).
func TestBinaryMissingDeniedPathsCannotBeCreated(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			home := userDir(t, m)
			cfgDir := userDir(t, m)
			// The start-up files are given up, so that no missing one
			// keeps the top of the home directory and ~/.config from
			// being written anyway.
			write(t, filepath.Join(cfgDir, "config.json"), `{"sandbox": {"protectStartupFiles": false, "deniedPaths": ["`+
				filepath.Join(home, "secrets", "vault", "token")+`"]}}`)
			write(t, filepath.Join(home, "dotfiles", "docker", "buildx", "keep"), "x\n")
			write(t, filepath.Join(home, "dotfiles", "vault", "keep"), "x\n")
			write(t, filepath.Join(home, ".config", "other", "keep"), "x\n")
			write(t, filepath.Join(home, "scratch", "keep"), "x\n")
			for link, target := range map[string]string{".docker": "dotfiles/docker", "secrets": "dotfiles"} {
				if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
					t.Fatal(err)
				}
			}
			script := `try ssh-config 'mkdir -p .ssh && echo "Match exec evil" > .ssh/config'
try agent-config 'mkdir -p .config/acp-agent && echo "{}" > .config/acp-agent/config.json'
try kube 'mkdir -p .kube && echo evil > .kube/config'
try docker-through-link 'echo "{\"credsStore\":\"evil\"}" > .docker/config.json'
try docker-real 'echo "{\"credsStore\":\"evil\"}" > dotfiles/docker/config.json'
try configured-through-link 'echo evil > secrets/vault/token'
try configured-real 'echo evil > dotfiles/vault/token'
try netrc 'echo "machine x password y" > .netrc'
echo x > scratch/new && echo SCRATCH-WRITTEN
`
			files := []modelCall{
				{"write_file", map[string]any{"path": ".ssh/config", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": ".config/acp-agent/config.json", "content": "{}"}},
				{"write_file", map[string]any{"path": "dotfiles/docker/config.json", "content": "{}"}},
				{"write_file", map[string]any{"path": "dotfiles/vault/token", "content": "PLANTED"}},
				{"write_file", map[string]any{"path": "scratch/other", "content": "OK"}},
			}
			out, results := attackHomeDenied(t, m, home, script, files, "--config", filepath.Join(cfgDir, "config.json"))
			assert.Contains(t, out, "SCRATCH-WRITTEN", "scratch/ stays writable (control)")
			assert.NotContains(t, results[4], "denied", "scratch/ stays writable to the file tools (control): %s", results[4])
			for _, p := range []string{".ssh", ".config/acp-agent", ".kube", "dotfiles/docker/config.json", "dotfiles/vault/token", ".netrc"} {
				_, err := os.Lstat(filepath.Join(home, p))
				assert.True(t, os.IsNotExist(err), "%s was created", p)
			}
		})
	}
}
