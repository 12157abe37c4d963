package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/schemacheck"
)

// runExecBin runs "acp-agent exec args..." in dir and returns stdout,
// stderr and the exit status.
func runExecBin(t *testing.T, dir, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(agentBin, append([]string{"exec"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(agentEnv(t), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := startCmd(t, cmd, nil).Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

func textScript(t *testing.T, finish string, events ...map[string]any) string {
	t.Helper()
	turn := map[string]any{"events": events}
	if finish != "" {
		turn["finish"] = finish
	}
	return writeScript(t, map[string]any{"turns": []any{turn}})
}

func TestExecPrintsTheAnswerAndExitsByStopReason(t *testing.T) {
	tests := []struct {
		name       string
		finish     string
		events     []map[string]any
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"end_turn", "", []map[string]any{{"reasoning": "Let me think."}, {"text": "Hello"}, {"text": ", world"},
			{"usage": map[string]any{"inputTokens": 7, "outputTokens": 3}}}, 0, "Hello, world\n", "stop: end_turn · tokens: 7 in, 3 out"},
		{"max_tokens", "length", []map[string]any{{"text": "cut sh"}}, 3, "cut sh\n", "stop: max_tokens"},
		{"refusal", "content_filter", []map[string]any{{"text": "no"}}, 4, "no\n", "stop: refusal"},
		{"model error", "", []map[string]any{{"error": "the model broke"}}, 1, "", "the model broke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := textScript(t, tt.finish, tt.events...)
			stdout, stderr, code := runExecBin(t, t.TempDir(), "", nil, "--model", "replay/"+script, "--max-retries", "0", "say hello")
			assert.Equal(t, tt.wantCode, code, "stderr: %s", stderr)
			assert.Equal(t, tt.wantStdout, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
			if tt.name == "end_turn" {
				assert.Contains(t, stderr, "Let me think.", "thoughts go to stderr")
				assert.NotContains(t, stderr, "level=INFO", "exec logs only warnings by default")
			}
		})
	}
}

func TestExecJSONPrintsSchemaValidUpdatesThenTheResult(t *testing.T) {
	script := textScript(t, "", map[string]any{"text": "a"}, map[string]any{"text": "b"})
	stdout, stderr, code := runExecBin(t, t.TempDir(), "", nil, "--model", "replay/"+script, "--json", "hi")
	require.Equal(t, 0, code, stderr)
	checker, err := schemacheck.Load()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	// The answer's two chunks may come merged into one (the second
	// queued before the first was written).
	require.Contains(t, []int{4, 5}, len(lines), "the slash commands, the title, the answer's chunks, the result")
	last := len(lines) - 1
	var text string
	for _, l := range lines[:last] {
		assert.NoError(t, checker.Validate("SessionNotification", []byte(l)), l)
		var n acp.SessionNotification
		require.NoError(t, json.Unmarshal([]byte(l), &n))
		if c := n.Update.AgentMessageChunk; c != nil {
			text += c.Content.Text.Text
		}
	}
	assert.Equal(t, "ab", text, "the answer, whole and in order")
	var pr acp.PromptResponse
	require.NoError(t, json.Unmarshal([]byte(lines[last]), &pr))
	assert.Equal(t, acp.StopReasonEndTurn, pr.StopReason)
}

func TestExecReadsThePromptFromStdin(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "from stdin", "events": []any{map[string]any{"text": "matched"}}},
		map[string]any{"events": []any{map[string]any{"text": "other"}}},
	}})
	stdout, stderr, code := runExecBin(t, t.TempDir(), "a prompt from stdin\n", nil, "--model", "replay/"+script, "-")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "matched\n", stdout)
}

func TestExecUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no prompt", nil, "no prompt"},
		{"blank prompt", []string{"  "}, "no prompt"},
		{"bad --allow", []string{"--allow", "everything", "hi"}, `"everything" is not one of none, edits, all`},
		{"bad --prompt-timeout", []string{"--prompt-timeout", "soon", "hi"}, "not a duration"},
		// docs/configuration.md: 2 is a configuration error, and a model
		// that cannot be used is one (it used to exit 1, a model failure's).
		{"no API key", []string{"--model", "openai/gpt-4.1", "hi"}, "OPENAI_API_KEY is not set"},
		{"unknown provider", []string{"--model", "nope/x", "hi"}, `unknown provider "nope"`},
		{"unreadable replay script", []string{"--model", "replay/" + filepath.Join(os.TempDir(), "no-such-script.json"), "hi"}, "no-such-script.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runExecBin(t, t.TempDir(), "", nil, append([]string{"--model", "replay/default"}, tt.args...)...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

func TestExecInterruptCancelsTheTurn(t *testing.T) {
	needsSignals(t)
	script := textScript(t, "", map[string]any{"text": "working"}, map[string]any{"hang": true})
	cmd := exec.Command(agentBin, "exec", "--model", "replay/"+script, "go")
	cmd.Dir = t.TempDir()
	cmd.Env = agentEnv(t)
	var stdout, stderr syncWriter
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd = startCmd(t, cmd, nil)
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "working") }, waitBudget(t), 5*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "exit: %v", err)
		assert.Equal(t, 130, ee.ExitCode())
		assert.Contains(t, stderr.String(), "stop: cancelled")
	case <-time.After(waitBudget(t)):
		_ = cmd.Process.Kill()
		t.Fatalf("exec did not end after SIGINT; stderr: %s", stderr.String())
	}
}

// The config file lists models; session/new offers them and
// set_config_option switches between them (here two replay scripts).
func TestBinaryConfigFileModelsBecomeConfigOptions(t *testing.T) {
	first := textScript(t, "", map[string]any{"text": "from first"})
	second := textScript(t, "", map[string]any{"text": "from second"})
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "acp-agent"), 0o755))
	cfg := `{
  "model": "replay/` + jsonText(first) + `",
  "models": [
    {"model": "replay/` + jsonText(first) + `", "name": "First"},
    {"model": "replay/` + jsonText(second) + `", "name": "Second", "description": "the other one"}
  ]
}`
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "acp-agent", "config.json"), []byte(cfg), 0o600))
	p := startAgent(t, []string{"XDG_CONFIG_HOME=" + xdg})
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	var ns acp.NewSessionResponse
	require.Nil(t, resp.Error)
	require.NoError(t, json.Unmarshal(resp.Result, &ns))
	require.Len(t, ns.ConfigOptions, 2, "mode and model")
	assert.Equal(t, "mode", string(ns.ConfigOptions[0].ID))
	model := ns.ConfigOptions[1]
	assert.Equal(t, "replay/"+first, string(model.Select.CurrentValue))
	require.Len(t, model.Select.Options.Options, 2)
	assert.Equal(t, "Second", model.Select.Options.Options[1].Name)
	sid := string(ns.SessionID)

	ask := func() string {
		resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
		require.Nil(t, resp.Error)
		return textOf(t, updates)
	}
	assert.Equal(t, "from first", ask())
	v := acp.SessionConfigValueId("replay/" + second)
	resp, _ = p.Call(acp.MethodSessionSetConfigOption, &acp.SetSessionConfigOptionRequest{SessionID: acp.SessionId(sid), ConfigID: "model", Value: acp.SessionConfigOptionValue{ValueID: &v}})
	require.Nil(t, resp.Error, "%s", resp.Raw)
	assert.Equal(t, "from second", ask())
}

// Issue 25 item 6: a config file the agent cannot use no longer stops it
// before initialize. initialize succeeds; session/new answers with the
// file, the line and column, and the fix (code -32000, as without a key,
// with the details as data); exec, whose user reads stderr, stops with it.
func TestConfigFileErrorsAreAnsweredAtSessionNew(t *testing.T) {
	tests := []struct {
		name, file, want, at string // at: the text the line and column point to
	}{
		{"syntax", "{\n  \"model\": \"replay/default\",\n  oops\n}", "invalid character", "oops"},
		{"trailing comma", "{\n  \"model\": \"replay/default\",\n}", "remove the comma", "}"},
		{"unknown member", `{"modle": "replay/default"}`, `unknown member "modle"`, `"modle"`},
		{"case", `{"Model": "replay/default"}`, `did you mean "model"?`, `"Model"`},
		{"model member typo", `{"models": [{"model": "replay/default", "apikeyenv": "K"}]}`, `"apikeyenv" (did you mean "apiKeyEnv"?`, `"apikeyenv"`},
		{"bad spec", `{"models": [{"model": "gpt-4"}]}`, "models[0]", `"model": "gpt-4"`},
		{"bad timeout", `{"mode": "default", "promptTimeout": "forever"}`, `"promptTimeout" "forever"`, `"promptTimeout"`},
		{"wrong type", `{"maxRetries": "two"}`, `"maxRetries": expected int`, `"maxRetries"`},
		{"terminal", `{"terminal": {"path": ["bin"]}}`, `"terminal.path": "bin" is not an absolute directory`, `"terminal"`},
		// The file tools keep out of the denied paths with the sandbox off
		// too: a relative one no longer stops the agent before initialize.
		{"relative denied path", "{\"sandbox\": {\"mode\": \"off\",\n  \"deniedPaths\": [\"vault\"]}}", `"sandbox.deniedPaths": "vault" is not an absolute path`, `"vault"`},
		{"relative protected path", "{\"sandbox\": {\"mode\": \"off\",\n  \"protectedPaths\": [\".bashrc\"]}}", `"sandbox.protectedPaths": ".bashrc" is not an absolute path`, `".bashrc"`},
		// docs/configuration.md: the parser is strict below the top level
		// too. encoding/json dropped an unknown sandbox member (a secret
		// meant to be denied stayed readable) and matched names in any
		// case; a bad log level or sandbox mode stopped the agent before
		// initialize instead of being answered here.
		{"sandbox member typo", "{\"sandbox\": {\n  \"denied_paths\": [\"/home/me/vault\"]}}", `unknown member "denied_paths" (did you mean "deniedPaths"?) in "sandbox"`, `"denied_paths"`},
		{"sandbox member case", `{"sandbox": {"deniedpaths": ["/home/me/vault"]}}`, `names are case-sensitive`, `"deniedpaths"`},
		{"resize member typo", `{"resize": {"everyNturns": 3}}`, `unknown member "everyNturns"`, `"everyNturns"`},
		{"hook event typo", `{"hooks": {"beforetool": [{"command": "true"}]}}`, `unknown member "beforetool" (did you mean "beforeTool"?`, `"beforetool"`},
		{"hook member typo", `{"hooks": {"beforeTool": [{"command": "true", "timout": "1s"}]}}`, `unknown member "timout" (did you mean "timeout"?) in "hooks.beforeTool[0]"`, `"timout"`},
		{"log level", `{"logLevel": "loud"}`, `"logLevel": unknown log level "loud"`, `"logLevel"`},
		{"sandbox mode", `{"sandbox": {"mode": "sometimes"}}`, `"sandbox.mode" "sometimes": want "auto", "on" or "off"`, `"mode"`},
		{"negative offload threshold", `{"offloadThreshold": -5}`, `"offloadThreshold" must not be negative`, `"offloadThreshold"`},
		{"base URL without a scheme", `{"models": [{"model": "openai/qwen3", "baseUrl": "localhost:11434/v1"}]}`, `models[0]: "baseUrl" must be an absolute http:// or https:// URL`, `"baseUrl"`},
		{"object of the wrong type", `{"sandbox": 5}`, `"sandbox": expected an object, got JSON number`, `"sandbox"`},
		{"array of the wrong type", `{"allowedCommands": "git"}`, `"allowedCommands": expected an array, got JSON string`, `"allowedCommands"`},
		{"thought level", `{"models": [{"model": "openai/gpt-5", "thoughtLevel": "ultra"}]}`, `models[0]: "thoughtLevel": unknown thought level "ultra"`, `"thoughtLevel"`},
		{"thought levels", `{"models": [{"model": "openai/gpt-5", "thoughtLevels": ["low", "extreme"]}]}`, `models[0]: "thoughtLevels": unknown thought level "extreme"`, `"thoughtLevels"`},
		{"negative resize", `{"resize": {"everyNTurns": -1}}`, `"resize.everyNTurns" must not be negative`, `"everyNTurns"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.file), 0o600))
			p := startAgent(t, []string{"OPENAI_API_KEY=k"}, "--config", path)
			init := p.Initialize(nil)
			require.Len(t, init.AuthMethods, 1, "the fix is advertised like a missing key")
			resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
			require.NotNil(t, resp.Error, "session/new must explain the config file")
			assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
			msg := resp.Error.Message
			assert.Contains(t, msg, path)
			assert.Contains(t, msg, tt.want)
			assert.Contains(t, msg, "To fix it:")
			var data struct {
				File         string `json:"file"`
				Line, Column int
				Fix          string `json:"fix"`
			}
			require.NoError(t, json.Unmarshal(resp.Error.Data, &data), "%s", resp.Raw)
			assert.Equal(t, path, data.File)
			assert.NotEmpty(t, data.Fix)
			// The line and column point at the culprit.
			lines := strings.Split(tt.file, "\n")
			require.Positive(t, data.Line, "%s", msg)
			require.LessOrEqual(t, data.Line, len(lines))
			assert.True(t, strings.HasPrefix(lines[data.Line-1][data.Column-1:], tt.at), "line %d column %d of %q is not at %q", data.Line, data.Column, tt.file, tt.at)
			assert.Contains(t, msg, fmt.Sprintf("line %d, column %d", data.Line, data.Column))
			// Nothing was printed on stderr but what the user can act on.
			p.stdin.Close()
			require.NoError(t, p.waitExit(t, 5*time.Second), "the agent ran until its stdin closed")
		})
	}
	t.Run("explicit file must exist", func(t *testing.T) {
		p := startAgent(t, nil, "--config", "/nonexistent/config.json")
		p.Initialize(nil)
		resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
		require.NotNil(t, resp.Error)
		assert.Contains(t, resp.Error.Message, "config file /nonexistent/config.json")
	})
	t.Run("exec stops with it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"modle": "x"}`), 0o600))
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), strings.NewReader(""), &stdout, &stderr, []string{"exec", "--config", path, "hi"})
		var ee *exitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, exitUsage, ee.code)
		assert.Contains(t, err.Error(), "line 1, column 2")
		assert.Empty(t, stdout.String())
	})
}

// Flags beat the environment, which beats the config file.
func TestSettingsPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"model": "replay/from-file", "maxRetries": 5, "promptTimeout": "3m", "executionState": true}`), 0o600))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	parse := func(args ...string) *settings {
		t.Helper()
		st, err := parseSettings("acp-agent", append([]string{"--config", path}, args...), &bytes.Buffer{}, &bytes.Buffer{}, getenv, nil)
		require.NoError(t, err)
		return st
	}
	st := parse()
	assert.Equal(t, "replay/from-file", st.model)
	assert.Equal(t, 5, st.maxRetries)
	assert.Equal(t, 3*time.Minute, st.promptTimeout)
	assert.True(t, st.execState)

	env["ACP_AGENT_MODEL"] = "replay/from-env"
	env["ACP_AGENT_MAX_RETRIES"] = "1"
	env["ACP_AGENT_EXECUTION_STATE"] = "false"
	st = parse()
	assert.Equal(t, "replay/from-env", st.model)
	assert.Equal(t, 1, st.maxRetries)
	assert.False(t, st.execState, "an explicit environment false beats the file's true")

	st = parse("--model", "replay/from-flag", "--max-retries", "0", "--prompt-timeout", "5s")
	assert.Equal(t, "replay/from-flag", st.model)
	assert.Equal(t, 0, st.maxRetries)
	assert.Equal(t, 5*time.Second, st.promptTimeout)
}

// A bad value names the layer it came from.
func TestSettingsErrorsNameTheirLayer(t *testing.T) {
	_, err := parseSettings("acp-agent", []string{"--mode", "yolo"}, &bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" }, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mode (from the flags and environment)")
	_, err = parseSettings("acp-agent", nil, &bytes.Buffer{}, &bytes.Buffer{}, func(k string) string {
		return map[string]string{"ACP_AGENT_PERMISSION": "maybe"}[k]
	}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ask, allow or deny")
}
