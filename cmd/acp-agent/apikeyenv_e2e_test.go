package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// README: with no usable model, session/new answers -32000 "with a message
// naming exactly what to set". A model of the config file with its own
// apiKeyEnv reads that variable, not the provider's: the message used to
// say OPENAI_API_KEY is not set even with OPENAI_API_KEY set, sending the
// user to fix the wrong variable. doctor says the same.
func TestAMissingApiKeyEnvIsNamedNotTheProvidersVariable(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"model": "openai/local", "discoverModels": false,
  "models": [{"model": "openai/local", "apiKeyEnv": "LOCAL_MODEL_KEY"}, {"model": "replay/default"}]}`), 0o600))
	env := []string{"OPENAI_API_KEY=sk-the-providers"}

	p := startAgent(t, env, "--config", cfg)
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error, "%s", resp.Raw)
	assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "LOCAL_MODEL_KEY is not set")
	assert.NotContains(t, resp.Error.Message, "OPENAI_API_KEY", "the model does not read it")

	stdout, _, code := runBin(t, t.TempDir(), env, "doctor", "--offline", "--config", cfg)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "LOCAL_MODEL_KEY is not set")

	stdout, _, code = runBin(t, t.TempDir(), append(env, "LOCAL_MODEL_KEY=k"), "doctor", "--offline", "--config", cfg)
	assert.Equal(t, 0, code, "%s", stdout)
	assert.Contains(t, stdout, "openai/local: key set")
}
