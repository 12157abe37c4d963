package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// registryEnv is the environment of the ACP registry's auth check: an
// empty HOME, no provider keys, TERM=dumb.
func registryEnv(home string) []string {
	env := []string{"HOME=" + home, "USERPROFILE=" + home, "TERM=dumb", goraceEnv}
	for _, k := range []string{"PATH", "SystemRoot", "TEMP", "TMP"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// The ACP registry's auth check, to its rules
// (agentclientprotocol/registry .github/workflows/client.py): start the
// agent with an empty HOME and no keys, send its initialize, and require
// that the reply lists an auth method of type "agent" (no type) or
// "terminal", and that stdout carries nothing but JSON-RPC messages from
// the first byte to the last.
func TestBinaryRegistryAuthCheck(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(agentBin)
	cmd.Env = registryEnv(home)
	cmd.Dir = t.TempDir()
	var stdin io.WriteCloser
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd = startCmd(t, cmd, func(cmd *exec.Cmd) (err error) {
		stdin, err = cmd.StdinPipe()
		return err
	})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,` +
		`"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},` +
		`"clientCapabilities":{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},` +
		`"_meta":{"terminal_output":true,"terminal-auth":true}}}}` + "\n"
	_, err := stdin.Write([]byte(init))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // the validator reads, then terminates the agent
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		require.NoError(t, err, "stderr: %s", stderr.String())
	case <-time.After(waitBudget(t)):
		_ = cmd.Process.Kill()
		t.Fatal("the agent did not exit after stdin closed")
	}

	out := stdout.Bytes()
	require.NotEmpty(t, out)
	assert.Equal(t, byte('{'), out[0], "stdout starts with JSON")
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			AuthMethods []map[string]any `json:"authMethods"`
		} `json:"result"`
		Error any `json:"error"`
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		lines++
		var msg map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg), "stdout line %d is not JSON: %q", lines, sc.Text())
		assert.Equal(t, "2.0", msg["jsonrpc"])
		if msg["id"] == float64(1) {
			require.NoError(t, json.Unmarshal(sc.Bytes(), &resp))
		}
	}
	require.Nil(t, resp.Error)
	types := map[string]map[string]any{}
	for _, m := range resp.Result.AuthMethods {
		typ, _ := m["type"].(string)
		if typ == "" {
			typ = "agent" // the registry's default
		}
		types[typ] = m
	}
	require.NotEmpty(t, types, "no authMethods: the registry rejects the agent")
	require.Contains(t, types, "agent", "the configure-a-model method")
	require.Contains(t, types, "terminal", "the terminal login")
	assert.Equal(t, []any{"login"}, types["terminal"]["args"], "it runs acp-agent login")
	assert.Contains(t, types["terminal"]["_meta"], "terminal-auth", "Zed's launch hint")
}

// A client that cannot run a terminal method is not offered one.
func TestBinaryTerminalLoginOnlyForClientsThatCanRunIt(t *testing.T) {
	p := startAgent(t, nil)
	init := p.Initialize(nil)
	for _, m := range init.AuthMethods {
		assert.Nil(t, m.Terminal, "a terminal method for a client without auth.terminal")
	}
	require.NotEmpty(t, init.AuthMethods, "the agent method stays")
}

// fakeProvider answers GET /v1/models like OpenAI for the key it
// accepts, and records the Authorization headers it saw.
type fakeProvider struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newFakeProvider(t *testing.T, key string) *fakeProvider {
	f := &fakeProvider{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"gpt-4.1","object":"model"},{"id":"gpt-4.1-mini","object":"model"}]}`))
	}))
	t.Cleanup(f.Close)
	return f
}

// acp-agent login checks the key with the provider, stores it (here, with
// no keychain reachable, in a 0600 file in the config directory), and the
// agent started afterwards with no key in its environment finds it and
// the base URL: its model is usable, so it no longer asks to configure
// one. A key the provider refuses is not stored.
func TestBinaryLoginStoresAKeyTheAgentThenUses(t *testing.T) {
	home := t.TempDir()
	prov := newFakeProvider(t, "sk-good")
	login := func(key string) (string, error) {
		cmd := exec.Command(agentBin, "login", "--provider", "openai", "--base-url", prov.URL+"/v1")
		cmd.Env = registryEnv(home)
		cmd.Stdin = strings.NewReader(key + "\n")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := startCmd(t, cmd, nil).Wait()
		return out.String(), err
	}
	creds := filepath.Join(home, ".config", "acp-agent", "credentials.json")

	out, err := login("sk-bad")
	require.Error(t, err, out)
	assert.Contains(t, out, "401")
	assert.NoFileExists(t, creds, "a refused key is not stored")

	out, err = login("sk-good")
	require.NoError(t, err, out)
	assert.Contains(t, out, "it works (2 models)")
	assert.NotContains(t, out, "sk-good", "the key is never printed")
	fi, err := os.Stat(creds)
	require.NoError(t, err)
	if goruntime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	var c credentialsFile
	data, _ := os.ReadFile(creds)
	require.NoError(t, json.Unmarshal(data, &c))
	if c.Storage == "file" {
		assert.Equal(t, "sk-good", c.Key)
	} else {
		assert.Empty(t, c.Key, "a key in the keychain is not also in the file")
	}

	p := startAgent(t, registryEnv(home)) // the last HOME wins
	init := p.Initialize(nil)
	require.Len(t, init.AuthMethods, 1)
	assert.NotContains(t, init.AuthMethods[0].Agent.Description, "OPENAI_API_KEY is not set", "with the stored key the model is usable")
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	assert.Nil(t, resp.Error, "a session starts without authenticate")
	_, err = login("")
	assert.Error(t, err, "an empty key is refused")
}

// Issue 30 review: acp-agent exec (and doctor, which checks what an
// editor would start) find the key acp-agent login stored, as the editor
// mode and serve do: with no key in the environment, exec's turn reaches
// the provider with the stored key and prints its answer.
func TestBinaryExecAndDoctorUseTheKeyLoginStored(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	prov := newFakeModelServer(t, map[string]http.HandlerFunc{
		"GET /v1/models": func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer sk-stored" {
				http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
				return
			}
			jsonHandler(map[string]any{"object": "list", "data": []any{map[string]any{"id": "gpt-4.1", "object": "model"}}})(w, r)
		},
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer sk-stored" {
				http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, textStream("answered with the stored key", "stop"))
		},
	})
	login := exec.Command(agentBin, "login", "--provider", "openai", "--base-url", prov.URL+"/v1")
	login.Env = registryEnv(home)
	login.Stdin = strings.NewReader("sk-stored\n")
	out, err := login.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(agentBin, "exec", "--model", "openai/gpt-4.1", "say hi")
	cmd.Env, cmd.Dir = registryEnv(home), cwd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "answered with the stored key")
	assert.Contains(t, prov.requests(), "POST /v1/chat/completions Bearer sk-stored")

	doctor := exec.Command(agentBin, "doctor", "--offline", "--model", "openai/gpt-4.1")
	doctor.Env, doctor.Dir = registryEnv(home), cwd
	out, _ = doctor.CombinedOutput()
	assert.Contains(t, string(out), "openai/gpt-4.1: key set", "doctor sees the stored key")
	assert.NotContains(t, string(out), "sk-stored", "the key is never printed")
}
