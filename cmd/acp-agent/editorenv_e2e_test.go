package main

import (
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command run in the editor's terminal gets the editor's environment,
// where the agent's came from: the provider's key and the other
// variables named like secrets reached `env` there (a prompt-injected
// model's command, unconfined, with the network, could send them
// anywhere), though local commands never get them. The agent sends each
// such name empty with terminal/create.
func TestBinaryEditorTerminalNeverGetsTheAgentsSecrets(t *testing.T) {
	needsBash(t)
	const key, token = "sk-editor-key-4a7f19", "ghp-editor-token-8c2d55"
	// The editor's environment (the test client runs terminals with its
	// own), which it passed on to the agent it started.
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("GITHUB_TOKEN", token)
	t.Setenv("EDITOR_PLAIN_SETTING", "plain-value-31")
	// Named like secrets for AUTH, holding none: kept.
	t.Setenv("GIT_AUTHOR_NAME", "Author Name-77")
	t.Setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent-sock-91")
	// Named like secrets for TOKEN, PASSWORD or AUTH, holding none (an
	// empty TOKENIZERS_PARALLELISM turns parallel tokenizing off): kept;
	// and a build's usual settings.
	plain := []string{"TOKENIZERS_PARALLELISM=true", "PASSWORD_STORE_DIR=/tmp/pass-store-12", "XAUTHLOCALHOSTNAME=host-5",
		"GOFLAGS=-mod=mod", "AWS_PROFILE=dev-3", "NPM_CONFIG_CACHE=/tmp/npm-cache-4"}
	for _, kv := range plain {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	t.Setenv("PASSWORD_STORE_KEY_SECRET", "pass-secret-66")
	dir := t.TempDir()
	model := promptModel(t, map[string][]modelCall{"[env]": {{"run_command", map[string]any{"command": "env"}}}})
	client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_once"}
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "full-access")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY="+key, "GITHUB_TOKEN="+token, "OPENAI_BASE_URL="+model.URL+"/v1",
		"GIT_AUTHOR_NAME=Author Name-77", "SSH_AUTH_SOCK=/tmp/ssh-agent-sock-91", "PASSWORD_STORE_KEY_SECRET=pass-secret-66")
	cmd.Env = append(cmd.Env, plain...)
	conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{Terminal: true})
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[env]"))
	require.Contains(t, client.recorded(), "terminal/create", "the command ran in the editor's terminal")
	out := lastToolResult(t, model.body(t, 1))
	for _, kept := range append([]string{"EDITOR_PLAIN_SETTING=plain-value-31", "GIT_AUTHOR_NAME=Author Name-77", "SSH_AUTH_SOCK=/tmp/ssh-agent-sock-91"}, plain...) {
		assert.Contains(t, out, kept, "the editor's other variables stay (control)")
	}
	assert.NotContains(t, out, key, "the provider's key reached the command")
	assert.NotContains(t, out, token, "a secret-named variable reached the command")
	assert.NotContains(t, out, "pass-secret-66", "a secret-named variable reached the command past a kept part of its name")
}
