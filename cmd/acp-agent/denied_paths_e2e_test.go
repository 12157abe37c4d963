//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sandbox's denied paths hold for the file tools too, through the
// built binary, with the home directory as the workspace: read_file,
// write_file, edit_file, list_directory, glob and grep never show or touch
// ~/.ssh, ~/.aws/credentials (through a symlinked ~/.aws too), the config
// directory, serve's token in the state directory, the session directory
// or the log file; a symlink in the workspace into ~/.ssh is refused;
// the kept output of a long command stays readable. It holds with the
// sandbox on (auto) and off, and with the editor's fs/*, which is never
// given such a path.
func TestBinaryFileToolsRefuseTheSandboxDeniedPaths(t *testing.T) {
	needsBash(t)
	for _, v := range []struct {
		name   string
		args   []string
		editor bool
	}{
		{name: "sandbox auto"},
		{name: "sandbox off", args: []string{"--sandbox", "off"}},
		{name: "editor fs", editor: true},
	} {
		t.Run(v.name, func(t *testing.T) {
			home := testHome(t)
			w := func(rel, content string) {
				p := filepath.Join(home, rel)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
			}
			ln := func(target, rel string) {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(home, rel)), 0o755))
				require.NoError(t, os.Symlink(target, filepath.Join(home, rel)))
			}
			secrets := map[string]string{
				".ssh/id_rsa":                         "SSH_KEY_SECRET",
				"vault/aws/credentials":               "AWS_SECRET",
				".local/state/acp-agent/serve-token":  "SERVE_TOKEN_SECRET",
				".local/state/acp-agent/hooks/trust":  "TRUST_SECRET",
				".config/acp-agent/notes.md":          "CONFIG_SECRET",
				"sessions-x/planted.txt":              "SESSION_SECRET",
				"logs/agent.log":                      "LOG_SECRET\n",
				".ssh/keys/deploy":                    "DEPLOY_SECRET",
				".local/state/acp-agent/logs/old.log": "OLD_LOG_SECRET",
				".ssh/rules.md":                       "RULES_SECRET",
				".ssh/skills/leaky/SKILL.md":          "---\nname: leaky\ndescription: SKILL_SECRET\n---\nSKILL_BODY_SECRET",
				".ssh/commands/leak.md":               "---\ndescription: COMMAND_SECRET\n---\nCOMMAND_BODY_SECRET",
			}
			for p, c := range secrets {
				w(p, c)
			}
			// ~/.aws is a symlink to where the credentials really are.
			ln(filepath.Join(home, "vault", "aws"), ".aws")
			w(".sshx/ok.txt", "PREFIX_SIBLING_OK") // the control: not under ~/.ssh
			w("proj/readme.md", "ORDINARY_OK")
			ln(filepath.Join(home, ".ssh", "id_rsa"), "proj/key")
			ln(filepath.Join(home, ".ssh"), "proj/sshdir")
			ln("../.local/state/acp-agent", "proj/state")
			// The context's own doors: a rules file, the skills and the
			// commands directories leading into ~/.ssh; a real nested
			// rules file is the control.
			ln(filepath.Join(home, ".ssh", "rules.md"), "proj/AGENTS.md")
			ln(filepath.Join(home, ".ssh", "rules.md"), "AGENTS.md")
			ln(filepath.Join(home, ".ssh", "skills"), ".agents/skills")
			ln(filepath.Join(home, ".ssh", "commands"), ".acp-agent/commands")
			w("proj/inner/AGENTS.md", "NESTED_RULES_OK")
			w(".claude/skills/good/SKILL.md", "---\nname: good\ndescription: SKILL_DESCRIPTION_OK\n---\nbody")
			w("proj/inner/x.txt", "x")

			reads := []string{".ssh/id_rsa", ".ssh/keys/deploy", ".SSH/id_rsa", "proj/../.ssh/id_rsa", filepath.Join(home, ".ssh/id_rsa"),
				".aws/credentials", "vault/aws/credentials", ".local/state/acp-agent/serve-token", ".local/state/acp-agent/hooks/trust",
				".local/state/acp-agent/logs/old.log", ".config/acp-agent/notes.md", "sessions-x/planted.txt", "logs/agent.log",
				"proj/key", "proj/sshdir/id_rsa", "proj/state/serve-token"}
			var cs []modelCall
			for _, p := range reads {
				cs = append(cs, modelCall{"read_file", map[string]any{"path": p}})
			}
			cs = append(cs,
				modelCall{"list_directory", map[string]any{"path": ".ssh"}},
				modelCall{"list_directory", map[string]any{"path": "proj/sshdir"}},
				modelCall{"list_directory", map[string]any{"path": ".local/state/acp-agent"}},
				modelCall{"grep", map[string]any{"pattern": "SECRET", "path": ".ssh"}},
				modelCall{"grep", map[string]any{"pattern": "SECRET", "path": "proj/sshdir"}},
				modelCall{"edit_file", map[string]any{"path": ".ssh/id_rsa", "old_string": "SSH_KEY_SECRET", "new_string": "EDITED"}},
				modelCall{"edit_file", map[string]any{"path": "proj/key", "old_string": "SSH_KEY_SECRET", "new_string": "EDITED"}},
			)
			writes := []string{".ssh/authorized_keys", ".ssh/keys/deploy", ".aws/config", "vault/aws/config", ".local/state/acp-agent/serve-token",
				".local/state/acp-agent/hooks/new", ".config/acp-agent/config.json", "sessions-x/new.jsonl", "logs/agent.log",
				"proj/sshdir/authorized_keys", "proj/state/serve-token"}
			for _, p := range writes {
				cs = append(cs, modelCall{"write_file", map[string]any{"path": p, "content": "PLANTED"}})
			}
			// Whole-tree walks: what they show is checked below.
			walks := []modelCall{
				{"list_directory", map[string]any{"path": "."}},
				{"glob", map[string]any{"pattern": "**/*"}},
				{"grep", map[string]any{"pattern": "SECRET|_OK"}},
			}
			cs = append(cs, walks...)
			cs = append(cs, modelCall{"read_file", map[string]any{"path": "proj/readme.md"}},
				modelCall{"read_file", map[string]any{"path": "proj/inner/x.txt"}})
			cs = append(cs, modelCall{"read_file", map[string]any{"path": ".sshx/ok.txt"}},
				modelCall{"run_command", map[string]any{"command": "seq 1 150000 | sed 's/$/ output line/'"}})

			var kept string
			model := stepModel(t,
				calls(cs...),
				func(body string) (int, string) {
					for _, m := range toolMessages(t, body) {
						if k := regexp.MustCompile(`is in (\S+\.out): read_file it`).FindStringSubmatch(m); k != nil {
							kept = k[1]
						}
					}
					require.NotEmpty(t, kept, "the long output was kept")
					return calls(modelCall{"read_file", map[string]any{"path": kept, "offset": 75000, "limit": 2}})(body)
				},
				says("done"),
			)
			args := append([]string{"--model", "openai/test-model", "--mode", "full-access", "--session-dir", filepath.Join(home, "sessions-x"),
				"--log-file", filepath.Join(home, "logs", "agent.log")}, v.args...)
			cmd := exec.Command(agentBin, args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
			var client sdk.Client
			var caps sdk.ClientCapabilities
			var editor *diskEditor
			if v.editor {
				editor = &diskEditor{toolClient: newToolClient(home, "allow_once")}
				client = editor
				caps.Fs = sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
			} else {
				client = newToolClient(home, "allow_once")
			}
			conn, sid := startE2EWith(t, cmd, client, home, caps)
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
			// A command defined by a file under ~/.ssh would put its body
			// in the prompt.
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "/leak"))

			bodies := model.all()
			require.Len(t, bodies, 4)
			results := toolMessages(t, bodies[1])
			require.Len(t, results, len(cs))
			// What the agent sent the model (not what the model wrote in
			// its own calls): the system prompt, reminders, results.
			for i, b := range bodies {
				for _, m := range chatMessages(t, b) {
					text, _ := m.Content.(string)
					if m.Role == "assistant" {
						continue
					}
					for _, s := range secrets {
						for _, word := range strings.Fields(s) {
							if strings.Contains(word, "SECRET") {
								assert.NotContains(t, text, word, "request %d: the model saw a secret", i)
							}
						}
					}
				}
			}
			assert.Contains(t, bodies[2], "NESTED_RULES_OK", "a nested rules file is read (control)")
			assert.Contains(t, bodies[0], "SKILL_DESCRIPTION_OK", "a skill of the workspace is offered (control)")
			assert.Contains(t, bodies[0], "so are the user's credentials and the agent's own files: "+filepath.Join(home, ".ssh")+", "+filepath.Join(home, ".aws"),
				"the model is told what is off limits")
			for i, p := range reads {
				assert.Contains(t, results[i], "Permission denied", "read_file %s", p)
			}
			// The walks list the home directory but nothing denied.
			for i := range walks {
				r := results[len(cs)-len(walks)-4+i]
				for _, name := range []string{"id_rsa", "deploy", "credentials", "serve-token", "notes.md", "planted.txt", "agent.log", "old.log", "hooks", "rules.md", "leak"} {
					assert.NotContains(t, r, name, "%s showed %s", walks[i].Name, name)
				}
				if i == 0 {
					for _, name := range []string{".ssh/\n", ".aws/", "sessions-x"} {
						assert.NotContains(t, r, name, "the home directory's listing showed %s", name)
					}
					assert.Contains(t, r, "proj/", "the listing shows ordinary directories (control)")
					continue
				}
				assert.Contains(t, r, "readme.md", "%s shows ordinary files (control)", walks[i].Name)
			}
			assert.Contains(t, results[len(cs)-2], "PREFIX_SIBLING_OK", "~/.sshx is not ~/.ssh (control)")
			assert.Contains(t, lastToolResult(t, bodies[2]), " 75000\t75000 output line\n 75001\t75001 output line",
				"the kept output, inside the session directory, stays readable")

			for p, c := range secrets {
				data, err := os.ReadFile(filepath.Join(home, p))
				require.NoError(t, err)
				if p == "logs/agent.log" {
					assert.True(t, strings.HasPrefix(string(data), c), "the log file was rewritten")
					continue
				}
				assert.Equal(t, c, string(data), "%s was changed", p)
			}
			for _, p := range writes {
				data, err := os.ReadFile(filepath.Join(home, p))
				if err == nil {
					assert.NotEqual(t, "PLANTED", string(data), "the model wrote %s", p)
				}
			}
			if editor != nil {
				editor.mu.Lock()
				for _, p := range editor.paths {
					if strings.Contains(p, filepath.Join("sessions-x", string(sid), "offloaded")) {
						continue // the kept output
					}
					for _, d := range []string{".ssh", ".aws", "vault", ".local", ".config", "sessions-x", "logs"} {
						assert.NotContains(t, p, string(filepath.Separator)+d+string(filepath.Separator), "the editor was given %s", p)
					}
				}
				editor.mu.Unlock()
				assert.Contains(t, editor.recorded(), "fs/read_text_file", "reads go through the editor (control)")
			}
		})
	}
}
