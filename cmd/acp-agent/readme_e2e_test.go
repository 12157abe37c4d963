package main

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// readmeBlock returns the first fenced block of lang after marker in the
// README.
func readmeBlock(t *testing.T, readme, marker, lang string) string {
	t.Helper()
	i := strings.Index(readme, marker)
	require.GreaterOrEqual(t, i, 0, "README has no %q", marker)
	rest := readme[i:]
	open := "```" + lang + "\n"
	j := strings.Index(rest, open)
	require.GreaterOrEqual(t, j, 0, "no %s block after %q", lang, marker)
	body := rest[j+len(open):]
	k := strings.Index(body, "```")
	require.GreaterOrEqual(t, k, 0)
	return body[:k]
}

// quoted returns the double-quoted strings of s, in order.
func quoted(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// agentShellKeys and acpClientKeys are the keywords agent-shell's
// agent-shell-make-agent-config and acp.el's acp-make-client take (their
// public APIs); the README must use no other.
var (
	agentShellKeys = []string{":identifier", ":mode-line-name", ":welcome-function", ":buffer-name", ":shell-prompt",
		":shell-prompt-regexp", ":client-maker", ":needs-authentication", ":authenticate-request-maker",
		":default-model-id", ":default-session-mode-id", ":icon-name", ":install-instructions"}
	acpClientKeys = []string{":context-buffer", ":command", ":command-params", ":environment-variables"}
)

// Issue 25 item 13: the README's editor set-ups work as written. Each one
// is read from the README, its command line run as the editor would run
// it (the binary in place of /path/to/acp-agent, the key and a loopback
// OpenAI-compatible server in the environment), and a session run with
// what that client advertises. The CodeCompanion adapter is acp-agent's
// own (no gemini_cli, no auth_method), and the agent-shell one uses only
// agent-shell's and acp.el's public functions and keywords.
func TestREADMEEditorSetUps(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(data)
	srv := newFakeModelServer(t, map[string]http.HandlerFunc{"POST /v1/chat/completions": chatWithUsage})
	fs := acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}

	type setUp struct {
		name    string
		command string
		args    []string
		env     map[string]string
		caps    acp.ClientCapabilities
	}
	var setUps []setUp
	for _, editor := range []struct{ name, marker string }{{"Zed", "**Zed**"}, {"JetBrains", "**JetBrains IDEs**"}} {
		var cfg struct {
			AgentServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"agent_servers"`
		}
		require.NoError(t, json.Unmarshal([]byte(readmeBlock(t, readme, editor.marker, "json")), &cfg), editor.name)
		s, ok := cfg.AgentServers["acp-agent"]
		require.True(t, ok, editor.name)
		setUps = append(setUps, setUp{editor.name, s.Command, s.Args, s.Env, acp.ClientCapabilities{FS: fs, Terminal: editor.name == "Zed"}})
	}

	lua := readmeBlock(t, readme, "**Neovim**", "lua")
	assert.NotContains(t, lua, "gemini_cli", "an adapter of its own")
	assert.NotContains(t, lua, "auth_method", "acp-agent needs no authentication method")
	assert.Contains(t, lua, `type = "acp"`)
	assert.Contains(t, lua, `require("codecompanion.adapters.acp.helpers").form_messages`)
	assert.Contains(t, lua, "readTextFile = true, writeTextFile = true")
	assert.Contains(t, readme, "Neovim ≥ 0.11")
	m := regexp.MustCompile(`commands = \{ default = \{([^}]*)\} \}`).FindStringSubmatch(lua)
	require.NotNil(t, m, "CodeCompanion adapter's commands.default")
	cmd := quoted(m[1])
	setUps = append(setUps, setUp{"CodeCompanion", cmd[0], cmd[1:], nil, acp.ClientCapabilities{FS: fs}})

	elisp := readmeBlock(t, readme, "**Emacs**", "elisp")
	assert.Equal(t, strings.Count(elisp, "("), strings.Count(elisp, ")"), "balanced parentheses")
	assert.Contains(t, elisp, "(agent-shell-make-agent-config")
	assert.Contains(t, elisp, "(acp-make-client")
	assert.Contains(t, elisp, "'agent-shell-agent-configs")
	assert.NotContains(t, elisp, "agent-shell--", "no private agent-shell functions")
	for _, kw := range regexp.MustCompile(`(?m)(:[a-z-]+)\b`).FindAllString(elisp, -1) {
		assert.True(t, slices.Contains(agentShellKeys, kw) || slices.Contains(acpClientKeys, kw), "keyword %s is not in agent-shell's or acp.el's API", kw)
	}
	command := regexp.MustCompile(`:command "([^"]+)"`).FindStringSubmatch(elisp)
	params := regexp.MustCompile(`:command-params '\(([^)]*)\)`).FindStringSubmatch(elisp)
	require.NotNil(t, command)
	require.NotNil(t, params)
	setUps = append(setUps, setUp{"agent-shell", command[1], quoted(params[1]), nil, acp.ClientCapabilities{FS: fs}})

	for _, s := range setUps {
		t.Run(s.name, func(t *testing.T) {
			require.Equal(t, "/path/to/acp-agent", s.command)
			env := []string{"OPENAI_API_KEY=sk-from-the-environment"}
			for k, v := range s.env {
				env = append(env, k+"="+v)
			}
			env = append(env, "OPENAI_BASE_URL="+srv.URL+"/v1", "ACP_AGENT_SESSION_DIR="+t.TempDir())
			p := startAgent(t, env, s.args...)
			p.Initialize(&s.caps)
			// The set-up is complete: a session starts without authenticate
			// (the configure-model method is always listed, for after logout).
			sid := p.NewSession(t.TempDir())
			resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("hello")}})
			var pr acp.PromptResponse
			acptest.MustResult(t, resp, &pr)
			assert.Equal(t, acp.StopReasonEndTurn, pr.StopReason)
			assert.Equal(t, "ok", textOf(t, updates))
			p.stdin.Close()
			require.NoError(t, p.waitExit(t, 10*time.Second))
			assert.Empty(t, p.stderr.String(), "a quiet start: nothing on stderr for the editor to show")
		})
	}
}
