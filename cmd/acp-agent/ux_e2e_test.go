package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// Rough edges a user meets in an editor, found by using the agent through
// real clients (the ux-review round); each test drives the built binary.

// promptErr sends one prompt and returns the JSON-RPC error the client
// got (nil when the turn ended normally).
func promptErr(t *testing.T, conn *sdk.ClientSideConnection, sid sdk.SessionId, text string) *sdk.RequestError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err == nil {
		return nil
	}
	var re *sdk.RequestError
	require.True(t, errors.As(err, &re), "a JSON-RPC error, got %v", err)
	return re
}

// A provider that refuses the API key (a typo in it, a revoked key)
// answers auth_required (-32000), as ACP asks, so the editor offers to log
// in, and the message names the variable to fix; it is not an internal
// error. Another failure of the provider stays -32603, and the session
// works once the server takes the key.
func TestBinaryRefusedAPIKeyAsksToLogIn(t *testing.T) {
	for _, tc := range []struct {
		provider, body, env, said string
		stream                    func(string) (int, string)
	}{
		{"openai", `{"error":{"message":"Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"OPENAI_API_KEY", "Incorrect API key provided", says("key fixed")},
		{"anthropic", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			"ANTHROPIC_API_KEY", "invalid x-api-key", func(string) (int, string) { return http.StatusOK, anthropicStream(nil, true) }},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			model := stepModel(t,
				func(string) (int, string) { return http.StatusUnauthorized, tc.body },
				func(string) (int, string) {
					return http.StatusInternalServerError, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`
				},
				tc.stream,
			)
			conn, sid := e2eSession(t, tc.provider, model, newToolClient(t.TempDir(), "allow_once"), sdk.ClientCapabilities{}, "--max-retries", "0")
			re := promptErr(t, conn, sid, "hello")
			require.NotNil(t, re, "the refused key fails the turn")
			assert.Equal(t, -32000, re.Code, "auth_required: %s", re.Message)
			assert.Contains(t, re.Message, tc.said, "the provider's own words")
			assert.Contains(t, re.Message, tc.env, "the variable to fix")
			assert.Contains(t, re.Message, "acp-agent login")

			re = promptErr(t, conn, sid, "hello again")
			require.NotNil(t, re)
			assert.Equal(t, -32603, re.Code, "a server error is not a key problem: %s", re.Message)

			assert.Nil(t, promptErr(t, conn, sid, "and again"), "the session goes on")
		})
	}
}

// A slash command with a wrong argument answers in words a person reads,
// with the choices, and no protocol field names ("invalid params: value:
// ..."); the same mistake in session/set_config_option is -32602 naming
// the field and the choices too.
func TestBinaryBadOptionValuesSayWhatTheChoicesAre(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	for _, tc := range []struct{ prompt, want string }{
		{"/model openai/gpt-99", `/model: unknown model "openai/gpt-99"; the models are replay/default`},
		{"/mode plan", `/mode: unknown mode "plan"; modes are read-only, default, accept-edits, full-access`},
	} {
		resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock(tc.prompt)}})
		acptest.MustResult(t, resp, nil)
		assert.Equal(t, tc.want, textOf(t, updates), "%s", tc.prompt)
	}
	for _, tc := range []struct{ id, value, want string }{
		{"model", "openai/gpt-99", `invalid params: value: unknown model "openai/gpt-99"; the models are replay/default`},
		{"mode", "plan", `invalid params: value: unknown mode "plan"; modes are read-only, default, accept-edits, full-access`},
		{"temperature", "1", `invalid params: configId: unknown config option "temperature"; the options are mode, model`},
	} {
		v := acp.SessionConfigValueId(tc.value)
		resp, _ := p.Call(acp.MethodSessionSetConfigOption, &acp.SetSessionConfigOptionRequest{
			SessionID: acp.SessionId(sid), ConfigID: acp.SessionConfigId(tc.id), Value: acp.SessionConfigOptionValue{ValueID: &v}})
		require.NotNil(t, resp.Error, "%s=%s", tc.id, tc.value)
		assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
		assert.Equal(t, tc.want, resp.Error.Message)
	}
}

// A call stopped by a standing answer (the user's "Always reject", or
// --permission deny) ends the turn cancelled, as seed 002 says; the tool
// call the editor shows, and the model reads next turn, says why instead
// of a bare "Error: cancelled.".
func TestBinaryAStandingRejectSaysWhyTheTurnStopped(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		args         []string
		want         string
	}{
		{"always reject", "reject_always", nil, `the user chose "Always reject" for file edits in this session`},
		{"permission deny", "allow_once", []string{"--permission", "deny"}, "the agent runs with --permission deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			model := newScriptedModel(t, "openai", modelCall{Name: "write_file", Args: map[string]any{"path": "new.txt", "content": "hi\n"}})
			client := newToolClient(ws, tc.answer)
			conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{}, tc.args...)
			if tc.answer == "reject_always" {
				assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "write new.txt"), "the answer itself rejects only the call")
				client.mu.Lock()
				require.Len(t, client.permissions, 1)
				names := map[sdk.PermissionOptionKind]string{}
				for _, o := range client.permissions[0].Options {
					names[o.Kind] = o.Name
				}
				client.mu.Unlock()
				assert.Equal(t, "Always reject file edits in this session", names[sdk.PermissionOptionKindRejectAlways], "the option names what it covers, as allow_always does")
				assert.Equal(t, "Always allow file edits in this session", names[sdk.PermissionOptionKindAllowAlways])
			}
			assert.Equal(t, sdk.StopReasonCancelled, promptE2E(t, conn, sid, "write new.txt"))
			// The second turn's call has an id of its own (the model
			// reused call_0): the last call to fail is the one stopped.
			var said []string
			client.mu.Lock()
			for _, u := range client.finals {
				if u.Status != nil && *u.Status == sdk.ToolCallStatusFailed {
					said = append(said, toolText(u))
				}
			}
			client.mu.Unlock()
			require.NotEmpty(t, said)
			assert.True(t, slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, tc.want) }), "the call says why: %q", said)
			assert.NoFileExists(t, filepath.Join(ws, "new.txt"))
		})
	}
}

// Every command's --help goes to stdout and exits 0; a mistyped flag is
// said once on stderr, with where the usage is, and nothing on stdout
// (connect and login used to dump their usage, connect's on stdout, the
// protocol's stream); the top-level usage lists every command; a command
// after a flag says it must come first.
func TestBinaryEveryCommandsHelpAndTypos(t *testing.T) {
	stdout, _, _ := runBin(t, t.TempDir(), nil, "--help")
	for _, sub := range subcommands {
		assert.Contains(t, stdout, "\n       acp-agent "+sub+" ", "acp-agent --help lists %s", sub)
	}
	for _, sub := range append([]string{""}, subcommands...) {
		name := strings.TrimSpace("acp-agent " + sub)
		args := strings.Fields(sub)
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runBin(t, t.TempDir(), nil, append(args, "--help")...)
			assert.Equal(t, 0, code)
			assert.Empty(t, stderr)
			assert.True(t, strings.HasPrefix(stdout, "Usage: "+name+" "), "%q", stdout)

			stdout, stderr, code = runBin(t, t.TempDir(), nil, append(args, "--bogus")...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout, "stdout is the protocol's")
			assert.Equal(t, "flag provided but not defined: -bogus\nRun "+name+" --help for the usage.\n", stderr, "said once, with where the usage is")
		})
	}
	_, stderr, code := runBin(t, t.TempDir(), nil, "--model", "replay/default", "exec", "hi")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `"exec" must come first, before its flags: acp-agent exec [flags]`)
	_, stderr, code = runBin(t, t.TempDir(), nil, "srve")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "acp-agent: unexpected argument \"srve\" (did you mean acp-agent serve? see --help)\n", stderr)
}

// A server that answers with a web page (a base URL without /v1, a proxy
// in front of the provider) fails the turn with the page's title, not
// its markup, and a 404 asks whether the base URL is right.
func TestBinaryAnHTMLErrorPageIsNamedNotDumped(t *testing.T) {
	for _, tc := range []struct {
		provider string
		status   int
		page     string
		want     string
	}{
		{"openai", http.StatusNotFound, "<!DOCTYPE html>\n<html lang=en>\n<head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>\n",
			"HTTP 404: 404 Not Found (the server answered with an HTML page, not an API error; is the base URL right? OPENAI_BASE_URL, or the model's baseUrl in the config file)"},
		{"anthropic", http.StatusBadGateway, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n",
			"HTTP 502: 502 Bad Gateway (the server answered with an HTML page, not an API error)"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			model := stepModel(t, func(string) (int, string) { return tc.status, tc.page })
			conn, sid := e2eSession(t, tc.provider, model, newToolClient(t.TempDir(), "allow_once"), sdk.ClientCapabilities{}, "--max-retries", "0")
			re := promptErr(t, conn, sid, "hello")
			require.NotNil(t, re)
			assert.Contains(t, re.Message, tc.want)
			assert.NotContains(t, re.Message, "<")
		})
	}
}

// A session/new (or load, resume) whose cwd or one of whose
// additionalDirectories is not a directory names that field and says
// what is wrong with it; a missing additional directory used to be
// reported as the cwd, with the runtime's wording.
func TestBinaryASessionDirectoryThatIsNoneIsNamed(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	p.Initialize(nil)
	ws := t.TempDir()
	file := filepath.Join(ws, "main.go")
	write(t, file, "package main\n")
	gone := filepath.Join(ws, "gone")
	for _, tc := range []struct {
		cwd   string
		extra []string
		want  string
	}{
		{gone, nil, "invalid params: cwd: " + gone + " does not exist"},
		{file, nil, "invalid params: cwd: " + file + " is not a directory"},
		{ws, []string{ws, gone}, "invalid params: additionalDirectories[1]: " + gone + " does not exist"},
	} {
		resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: tc.cwd, AdditionalDirectories: tc.extra, MCPServers: []acp.McpServer{}})
		require.NotNil(t, resp.Error, "%s %v", tc.cwd, tc.extra)
		assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
		assert.Equal(t, tc.want, resp.Error.Message)
	}
	assert.NotEmpty(t, p.NewSession(ws), "a directory opens")
}

// A session/list cursor the agent did not give (a stale one from another
// version, a client's bug) is -32602 saying what to do, without the
// store's internals.
func TestBinaryABadListCursorSaysWhatToDo(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionList, map[string]any{"cursor": "garbage"})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	assert.Equal(t, `invalid params: cursor: "garbage" is not a cursor session/list gave; list again without one`, resp.Error.Message)
}

// A prompt the model refuses as longer than its window, when compacting
// cannot help (the first prompt, a window smaller than the system prompt
// and tools, as a local server's default often is), fails with the
// provider's words and what the user can do about it.
func TestBinaryAPromptTooLongEvenCompactedSaysWhatToDo(t *testing.T) {
	overflow := `{"error":{"message":"This model's maximum context length is 4096 tokens. However, your messages resulted in 9001 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
	model := stepModel(t, func(string) (int, string) { return http.StatusBadRequest, overflow })
	conn, sid := e2eSession(t, "openai", model, newToolClient(t.TempDir(), "allow_once"), sdk.ClientCapabilities{})
	re := promptErr(t, conn, sid, "hello")
	require.NotNil(t, re)
	assert.Equal(t, -32603, re.Code)
	assert.Contains(t, re.Message, "maximum context length is 4096 tokens")
	assert.Contains(t, re.Message, "does not fit the model's context window, even compacted: /clear starts a new context, or choose a model with a larger window")
}

// ACP v2 ends the turn whose key the provider refused with an idle
// state whose error is auth_required too, with the variable to fix.
func TestBinaryV2RefusedAPIKeyAsksToLogIn(t *testing.T) {
	model := stepModel(t, func(string) (int, string) {
		return http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-bad.","type":"invalid_request_error","code":"invalid_api_key"}}`
	})
	p := startAgent(t, []string{"OPENAI_API_KEY=sk-bad", "OPENAI_BASE_URL=" + model.URL + "/v1", "ACP_AGENT_SESSION_DIR=" + t.TempDir()},
		"--model", "openai/test-model", "--max-retries", "0")
	p.InitializeV2(nil)
	sid := p.NewSessionV2(t.TempDir())
	turn := promptV2(t, p, sid, "hello", false)
	assert.Equal(t, acpv2.StopReasonError, turn.stop)
	var idle *acpv2.IdleStateUpdate
	for _, m := range turn.msgs {
		if m.Method == acpv2.MethodSessionUpdate {
			if s := m.UpdateV2(t).Update.StateUpdate; s != nil && s.Idle != nil {
				idle = s.Idle
			}
		}
	}
	require.NotNil(t, idle)
	require.NotNil(t, idle.Error)
	assert.Equal(t, acpv2.ErrorCodeAuthRequired, idle.Error.Code)
	assert.Contains(t, idle.Error.Message, "Incorrect API key provided")
	assert.Contains(t, idle.Error.Message, "OPENAI_API_KEY")
}

// An image the user attaches, for a model that does not read images (a
// local model, DeepSeek), goes to it as a note, not as an image part the
// server refuses: that refusal failed the turn and, the image being kept
// in the history, every later turn of the session. A model that reads
// images still gets the image.
func TestBinaryAnImageForAModelWithoutVisionDoesNotBreakTheSession(t *testing.T) {
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	refusesImages := func(body string) (int, string) {
		if strings.Contains(body, "image_url") {
			return http.StatusBadRequest, `{"error":{"message":"Failed to deserialize the JSON body into the target type: messages[1]: unknown variant ` + "`image_url`" + `, expected ` + "`text`" + `","type":"invalid_request_error"}}`
		}
		return says("ok")(body)
	}
	withImage := []sdk.ContentBlock{sdk.TextBlock("what is this"), sdk.ImageBlock(png, "image/png")}

	ws := t.TempDir()
	model := stepModel(t, refusesImages)
	conn, sid := qualityAgent(t, model, newToolClient(ws, "allow_once"), ws, "openai/test-model", "", "--max-retries", "0")
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: withImage})
	require.NoError(t, err)
	assert.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "never mind"), "the session goes on")
	bodies := model.all()
	require.Len(t, bodies, 2)
	assert.Contains(t, bodies[0], "The user attached an image (image/png), which is not shown: the model openai/test-model does not accept image input")
	assert.NotContains(t, bodies[1], "image_url")

	vision := stepModel(t, says("a pixel"))
	conn, sid = qualityAgent(t, vision, newToolClient(ws, "allow_once"), ws, "openai/gpt-4.1", "")
	resp, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: withImage})
	require.NoError(t, err)
	assert.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	assert.Contains(t, vision.all()[0], `"image_url"`, "a model that reads images gets it")
}

// A session started with a command from a file is titled with the
// command as the user typed it, not with the command's template (every
// "/review" session was titled "You are a careful reviewer. Review ..."
// and could not be told apart in session/list); the model still gets
// the expansion.
func TestBinaryAFileCommandTitlesTheSessionAsTyped(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".acp-agent", "commands", "review.md"),
		"---\ndescription: Review a file\nargument-hint: FILE\n---\nYou are a careful reviewer. Review $1 for bugs.\n")
	for _, v2 := range []bool{false, true} {
		p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
		var title string
		if v2 {
			p.InitializeV2(nil)
			sid := p.NewSessionV2(ws)
			turn := promptV2(t, p, sid, "/review calc.go", false)
			for _, m := range turn.msgs {
				if m.Method == acpv2.MethodSessionUpdate {
					if info := m.UpdateV2(t).Update.SessionInfoUpdate; info != nil {
						if v, ok := info.Title.Get(); ok {
							title = v
						}
					}
				}
			}
		} else {
			p.Initialize(nil)
			sid := p.NewSession(ws)
			resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("/review calc.go")}})
			acptest.MustResult(t, resp, nil)
			for _, m := range updates {
				if m.Method == acp.MethodSessionUpdate {
					if info := m.Update(t).Update.SessionInfoUpdate; info != nil {
						if v, ok := info.Title.Get(); ok {
							title = v
						}
					}
				}
			}
		}
		assert.Equal(t, "/review calc.go", title, "v2: %v", v2)
	}
}

// A 429 whose retry-after is an hour (a quota that resets later) fails
// the turn at once, saying how long the server asked to wait, instead of
// an hour of silence; a short retry-after is still waited for and the
// call retried.
func TestBinaryALongRetryAfterIsNotWaitedForInSilence(t *testing.T) {
	var mu sync.Mutex
	var calls int
	wait := "3600"
	srv := httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n, after := calls, wait
		mu.Unlock()
		if n%2 == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("retry-after", after)
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached for requests per day (RPD): Limit 200, Used 200. Please try again in 1h.","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, textStream("retried", "stop"))
	}))
	t.Cleanup(srv.Close)
	conn, sid := e2eSession(t, "openai", &scriptedModel{Server: srv}, newToolClient(t.TempDir(), "allow_once"), sdk.ClientCapabilities{})
	re := promptErr(t, conn, sid, "hello")
	require.NotNil(t, re)
	assert.Contains(t, re.Message, "Please try again in 1h")
	assert.Contains(t, re.Message, "the server asks to wait 1h0m0s before trying again, too long to wait for: not retried")
	mu.Lock()
	assert.Equal(t, 1, calls, "not retried")
	calls, wait = 2, "0.1" // the next call is refused, asking for 100 ms
	mu.Unlock()
	assert.Nil(t, promptErr(t, conn, sid, "again"), "a short wait is waited for and retried")
	mu.Lock()
	assert.Equal(t, 4, calls)
	mu.Unlock()
}

// exec - with nothing on stdin says stdin was empty, not that no "-" was
// given.
func TestBinaryExecFromAnEmptyStdinSaysSo(t *testing.T) {
	_, stderr, code := runExecBin(t, t.TempDir(), "\n", nil, "--model", "replay/default", "-")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "acp-agent: no prompt: \"-\" reads it from stdin, which was empty\n", stderr)
}

// A misspelt member of the config file is answered with the member it
// is a typo of, as a wrong case already was.
func TestBinaryAConfigTypoSuggestsTheMember(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.json")
	write(t, config, "{\n  \"maxRetires\": 3,\n  \"Mode\": \"default\",\n  \"zzzz\": 1\n}\n")
	stdout, _, code := runBin(t, t.TempDir(), nil, "doctor", "--offline", "--model", "replay/default", "--config", config)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, `unknown member "Mode" (did you mean "mode"? names are case-sensitive), "maxRetires" (did you mean "maxRetries"?), "zzzz";`)
}

// A model server that is not running (Ollama not started) fails the turn
// saying so and naming the variable that sets its address, beside Go's
// "connection refused".
func TestBinaryAServerThatIsNotRunningIsSaidSo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	ws := t.TempDir()
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--max-retries", "0")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL=http://"+addr+"/v1")
	conn, sid := startE2EWith(t, cmd, newToolClient(ws, "allow_once"), ws, sdk.ClientCapabilities{})
	re := promptErr(t, conn, sid, "hello")
	require.NotNil(t, re)
	// Go's words differ by OS ("connection refused", Windows' "connectex:
	// Connection refused."); the hint after them does not.
	assert.Contains(t, strings.ToLower(re.Message), "connection refused")
	assert.Contains(t, re.Message, " (nothing answers at that address: is the server running? Its address is the base URL: OPENAI_BASE_URL, or the model's baseUrl in the config file)")
}

// An MCP server that cannot start is told to the user once, without its
// name said twice, and logged once on stderr.
func TestBinaryAFailedMCPServerIsToldOnce(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	p.Initialize(nil)
	missing := filepath.Join(t.TempDir(), "no-such-server")
	resp, before := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(),
		MCPServers: []acp.McpServer{{Stdio: &acp.McpServerStdio{Name: "x", Command: missing, Args: []string{}, Env: []acp.EnvVariable{}}}}})
	acptest.MustResult(t, resp, nil)
	told := mcpFailures(t, p, before, 1)
	assert.True(t, strings.HasPrefix(told["x"], "connecting: "), "the name is said once: %q", told["x"])
	// Windows' exec error quotes the path: look for the file's name.
	assert.Contains(t, told["x"], "no-such-server")
	p.stdin.Close() // the log is whole once the agent has exited
	require.NoError(t, p.waitExit(t, 0))
	// By the file's name: a log quotes a Windows path's backslashes.
	assert.Equal(t, 1, strings.Count(p.stderr.String(), "no-such-server"), "logged once:\n%s", p.stderr.String())
}

// /compact of a conversation too short to compact answers so in the chat
// and puts no warning on stderr (editors show the agent's stderr as its
// errors); a client that shows compactions (session.compaction) is sent
// none: nothing started, nothing failed.
func TestBinaryCompactOfAShortConversationWarnsNobody(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	p.Initialize(&acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Compaction: &acp.CompactionCapabilities{}}})
	sid := p.NewSession(t.TempDir())
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock("/compact")}})
	acptest.MustResult(t, resp, nil)
	for _, u := range updates {
		assert.NotContains(t, string(u.Raw), "compaction", "no compaction is shown")
	}
	assert.Equal(t, "/compact: nothing to compact, the conversation is too short", textOf(t, updates))
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 0))
	assert.NotContains(t, p.stderr.String(), "compaction failed")
}

// A session that used a command from a file shows that message on
// session/load (v1) and session/resume with a replay (v2) as the user
// typed it, not as the command's template; the model was sent the
// expansion.
func TestBinaryALoadShowsAFileCommandAsTyped(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".acp-agent", "commands", "review.md"),
		"---\ndescription: Review a file\n---\nYou are a careful reviewer. Review $1 for bugs.\n")
	env := []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}
	p := startAgent(t, env, "--model", "replay/default")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	resp, _ := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid),
		Prompt: []acp.ContentBlock{acp.TextBlock("/review calc.go")}})
	acptest.MustResult(t, resp, nil)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, waitBudget(t)))
	stored, err := os.ReadFile(filepath.Join(env[0][len("ACP_AGENT_SESSION_DIR="):], sid+".jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(stored), "You are a careful reviewer. Review calc.go for bugs.", "the model's message is the expansion")

	p = startAgent(t, env, "--model", "replay/default")
	p.Initialize(nil)
	resp, loaded := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: acp.SessionId(sid), CWD: ws, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	var users []string
	for _, m := range loaded {
		if u := m.Update(t).Update.UserMessageChunk; u != nil && u.Content.Text != nil {
			users = append(users, u.Content.Text.Text)
		}
	}
	assert.Equal(t, []string{"/review calc.go"}, users, "v1 load")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, waitBudget(t)))

	p = startAgent(t, env, "--model", "replay/default")
	p.InitializeV2(nil)
	resp, replay := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: ws,
		ReplayFrom: &acpv2.ReplayFrom{Start: &acpv2.ReplayFromStart{}}})
	acptest.MustResult(t, resp, nil)
	users = nil
	for _, m := range replay {
		if u := m.UpdateV2(t).Update.UserMessage; u != nil {
			c, _ := u.Content.Get()
			for _, b := range c {
				users = append(users, b.Text.Text)
			}
		}
	}
	assert.Equal(t, []string{"/review calc.go"}, users, "v2 resume")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, waitBudget(t)))
}
