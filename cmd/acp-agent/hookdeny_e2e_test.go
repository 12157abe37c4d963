//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A repository's hooks file is a door that reads files too: the hooks
// file itself and every workspace file its hooks run are read by the
// agent (unconfined), shown in the trust question and copied to the pin
// directory, which confined commands can read. With the home directory
// as the workspace, a hook naming ~/.ssh/id_rsa, ~/.aws/credentials or a
// project's .env as its script (directly, through a workspace symlink,
// or as a Makefile) pulled the secret into the question and the copy.
// Such hooks are refused like the file tools refuse the file: no
// question, nothing runs, the user is told, and no secret reaches the
// client or the model. A hooks file reached through a symlinked
// .acp-agent directory under ~/.ssh is not read either.
func TestBinaryProjectHooksNeverPinTheDeniedPaths(t *testing.T) {
	requireSandbox(t)
	secrets := map[string]string{
		".ssh/id_rsa":             "print('SSH-PIN-SECRET')\n",
		".ssh/deploy.sh":          "echo SSH-SCRIPT-SECRET\n",
		".aws/credentials":        "ctx:\n\t@echo AWS-MAKE-SECRET\n",
		"proj/.env":               "print('ENV-PIN-SECRET')\n",
		"proj/.env.local":         "echo ENV-LOCAL-SECRET\n",
		".ssh/hookdir/hooks.json": `{"promptSubmit": [{"command": "echo HOOKS-FILE-SECRET"}]}`,
	}
	for name, v := range map[string]struct {
		line  string
		setup func(t *testing.T, home string)
	}{
		"interpreter script":         {line: "python3 .ssh/id_rsa"},
		"shell script":               {line: "bash .ssh/deploy.sh"},
		"absolute path":              {line: "python3 HOME/.ssh/id_rsa"},
		"case variant":               {line: "python3 .SSH/id_rsa"},
		"dot-dot":                    {line: "python3 proj/../.ssh/id_rsa"},
		"makefile":                   {line: "make -s -f .aws/credentials ctx"},
		"env file":                   {line: "python3 proj/.env"},
		"env file through a symlink": {line: "bash proj/notes.sh", setup: func(t *testing.T, home string) { link(t, ".env.local", filepath.Join(home, "proj", "notes.sh")) }},
		"secret through a symlink": {line: "python3 proj/key.py", setup: func(t *testing.T, home string) {
			link(t, filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, "proj", "key.py"))
		}},
		"source": {line: "source .ssh/deploy.sh"},
		"hooks file under a denied path": {setup: func(t *testing.T, home string) {
			require.NoError(t, os.Symlink(filepath.Join(home, ".ssh", "hookdir"), filepath.Join(home, ".acp-agent")))
		}},
	} {
		t.Run(name, func(t *testing.T) {
			home := testHome(t)
			for p, c := range secrets {
				write(t, filepath.Join(home, p), c)
			}
			if v.line != "" {
				hooks, err := json.Marshal(map[string]any{"promptSubmit": []map[string]string{{"command": strings.ReplaceAll(v.line, "HOME", home)}}})
				require.NoError(t, err)
				write(t, filepath.Join(home, ".acp-agent", "hooks.json"), string(hooks))
			}
			if v.setup != nil {
				v.setup(t, home)
			}
			client := &hookClient{toolClient: newToolClient(home, ""), trust: "allow_always"}
			msgs := hookSession(t, home, home, client, "hello")
			asked := client.asked("project-hooks")
			assert.Empty(t, asked, "a hook reading a denied path is not offered for trust")
			client.hmu.Lock()
			told := client.messages.String()
			client.hmu.Unlock()
			if v.line != "" {
				assert.Contains(t, told, "do not run", "the user is told why")
			}
			seen := strings.Join(msgs, "\n") + told
			for _, q := range asked {
				seen += questionText(t, q)
			}
			for _, c := range secrets {
				for _, word := range regexp.MustCompile(`[A-Z-]+SECRET`).FindAllString(c, -1) {
					assert.NotContains(t, seen, word, "a secret reached the client or the model")
				}
			}
		})
	}
}

func link(t *testing.T, target, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.Symlink(target, path))
}

// The trust question shows what runs, so what it shows must read as
// what runs: a hooks file or pinned script with bidi overrides,
// zero-width characters or terminal escapes ("Trojan Source") would show
// the user other text than the shell runs. Such characters are shown as
// <U+XXXX> in the question's content and raw input; the digest, and what
// runs, are the file's bytes.
func TestBinaryProjectHooksQuestionShowsInvisibleCharacters(t *testing.T) {
	requireSandbox(t)
	ws, home := t.TempDir(), t.TempDir()
	// Displayed, the override turns "# lla-rm-fr" around; the shell runs
	// rm, which the reader would take for a comment.
	hooks, err := json.Marshal(map[string]any{"promptSubmit": []map[string]string{
		{"command": "echo ok \u202e; rm -f victim #\u202c"}, {"command": "bash scripts/check.sh \u200b"}}})
	require.NoError(t, err)
	require.Contains(t, string(hooks), "\u202e", "the file holds the character itself")
	write(t, filepath.Join(ws, ".acp-agent", "hooks.json"), string(hooks))
	write(t, filepath.Join(ws, "scripts", "check.sh"), "echo CHECK\n# \x1b[2K\x1b[1Aerased\n")
	write(t, filepath.Join(ws, "victim"), "x")
	client := &hookClient{toolClient: newToolClient(ws, ""), trust: "reject_once"}
	hookSession(t, ws, home, client, "hello")
	qs := client.asked("project-hooks")
	require.Len(t, qs, 1)
	text := questionText(t, qs[0])
	for _, r := range []string{"\u202e", "\u202c", "\u200b", "\x1b"} {
		assert.NotContains(t, text, r, "the question shows %U as it is", []rune(r)[0])
	}
	for _, s := range []string{"<U+202E>", "<U+200B>", "<U+001B>"} {
		assert.Contains(t, text, s)
	}
	assert.FileExists(t, filepath.Join(ws, "victim"), "nothing ran without the trust")
}
