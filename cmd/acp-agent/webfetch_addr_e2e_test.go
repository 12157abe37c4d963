package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// Issue 24 (8): web_fetch never connects to a link-local or cloud
// metadata address, however the URL writes it or whatever name resolves
// to it. The agent runs in a network namespace the test makes (unshare),
// where those addresses are on the loopback interface and /etc/hosts
// names them: nothing leaves the machine, and a fetch the agent does not
// refuse is answered "connection refused" there.
func TestBinaryWebFetchRefusesMetadataAddresses(t *testing.T) {
	inNS, hostsEnv := metadataNamespace(t)
	refused := []string{
		"http://[fe80::1%25lo]/latest/meta-data/", // a zoned link-local literal
		"http://[fe80::1%25lo]:8080/",
		"http://100.100.100.200/latest/meta-data/", // Alibaba Cloud
		"http://metadata.test/latest/meta-data/",   // a name resolving there
		"http://[::ffff:100.100.100.200]/",         // IPv4-mapped
		"http://[64:ff9b::a9fe:a9fe]/",             // 169.254.169.254 through NAT64
		"http://[fd00:ec2::254]/",                  // AWS IPv6
		"http://[fd20:ce::254]/",                   // Google Cloud IPv6
		"http://169.254.169.254/",
	}
	allowed := []string{"http://100.100.100.201/", "http://neighbour.test/"} // neighbours are fine
	p, sid := fetchingAgent(t, inNS, hostsEnv, append(refused, allowed...))
	for i, u := range append(refused, allowed...) {
		resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("[fetch %d]", i))}})
		require.Nil(t, resp.Error)
		text, status := toolResultText(t, before, fmt.Sprintf("f%d", i))
		assert.Equal(t, "failed", status, u)
		if i < len(refused) {
			assert.Contains(t, text, "link-local or cloud metadata address", u)
			assert.NotContains(t, text, "connection refused", "%s: never dialled", u)
		} else {
			assert.Contains(t, text, "connection refused", "%s: dialled", u)
		}
	}
}

// Issue 24, pinned: a URL with a password and no user name carries
// credentials too, and is refused before anyone is asked.
func TestBinaryWebFetchRefusesAPasswordWithoutAUser(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[fetch]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "f1", "name": "web_fetch",
			"arguments": map[string]any{"url": "http://:SECRETPW@127.0.0.1:9/page"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[fetch]")}})
	require.Nil(t, resp.Error)
	for _, m := range before {
		assert.NotEqual(t, acp.MethodSessionRequestPermission, m.Method, "refused before anyone is asked")
	}
	text, status := toolResultText(t, before, "f1")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "carries credentials")
}

// Issue 30 (5): the credentials of a URL the model gives web_fetch are
// refused, and never shown, logged or stored either: not in the tool
// call's title or rawInput, the result, the session file, a replay of it,
// the logs (debug) or exec's output. The user name alone (a token, often)
// counts, and so does a URL that does not parse.
func TestBinaryWebFetchNeverShowsURLCredentials(t *testing.T) {
	urls := map[string]string{
		"f1": "http://alice:SECRETPW@127.0.0.1:9/page",
		"f2": "https://SECRETTOKEN@127.0.0.1:9/",
		"f3": "http://bob:SECRET%zzPW@127.0.0.1:9/page%zz",
		"f4": "http://carol:SECRET PW@127.0.0.1:9/",
	}
	var events []any
	for id, u := range urls {
		events = append(events, map[string]any{"toolCall": map[string]any{"id": id, "name": "web_fetch", "arguments": map[string]any{"url": u}}})
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[fetch]", "events": events},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	secrets := []string{"SECRET", "alice", "bob", "carol"}
	noSecret := func(where, text string) {
		t.Helper()
		for _, s := range secrets {
			assert.NotContains(t, text, s, where)
		}
	}
	sessionDir := t.TempDir()
	p := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off", "--session-dir", sessionDir, "--log-level", "debug")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, msgs := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[fetch]")}})
	require.Nil(t, resp.Error)
	var wire strings.Builder
	titles := map[string]string{}
	for _, m := range msgs {
		wire.Write(m.Raw)
		var n struct {
			Update struct {
				Kind   string `json:"sessionUpdate"`
				ID     string `json:"toolCallId"`
				Title  string `json:"title"`
				Status string `json:"status"`
			} `json:"update"`
		}
		if m.Method == acp.MethodSessionUpdate && json.Unmarshal(m.Params, &n) == nil && n.Update.Kind == "tool_call" {
			titles[n.Update.ID] = n.Update.Title
		}
	}
	for id := range urls {
		text, status := toolResultText(t, msgs, id)
		assert.Equal(t, "failed", status, id)
		assert.NotEmpty(t, text, id)
		assert.Contains(t, titles[id], "Fetch `http", id)
		assert.Contains(t, titles[id], "xxxxx@127.0.0.1:9", id)
	}
	text, _ := toolResultText(t, msgs, "f1")
	assert.Contains(t, text, "carries credentials", "still refused")
	noSecret("the protocol", wire.String())
	// A later process loads it: the replay shows what was stored.
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	noSecret("the logs", p.stderr.String())
	files, err := filepath.Glob(filepath.Join(sessionDir, "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Contains(t, string(data), "xxxxx@127.0.0.1:9")
		noSecret("the session file", string(data))
	}
	q := startAgent(t, nil, "--model", "replay/"+script, "--sandbox", "off", "--session-dir", sessionDir)
	q.Initialize(nil)
	resp, msgs = q.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: sid, CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	require.Nil(t, resp.Error)
	wire.Reset()
	for _, m := range msgs {
		wire.Write(m.Raw)
	}
	assert.Contains(t, wire.String(), "xxxxx@127.0.0.1:9")
	noSecret("the replay", wire.String())

	// exec prints the calls and their results.
	cmd := exec.Command(agentBin, "exec", "--json", "--model", "replay/"+script, "--sandbox", "off", "--cwd", t.TempDir(),
		"--session-dir", t.TempDir(), "[fetch]")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + t.TempDir()}
	out, _ := cmd.CombinedOutput()
	assert.Contains(t, string(out), "xxxxx@127.0.0.1:9")
	noSecret("exec's output", string(out))
}

// web_fetch reaches this machine only by a URL that names it, and never
// through a redirect to another host or a name that resolves there (DNS
// rebinding): the approval of "Fetch http://a-page/" must not fetch the
// user's own services. The agent runs in a mount namespace the test
// makes, where /etc/hosts sends rebind.test to 127.0.0.1; its servers
// are the test's, on loopback.
func TestBinaryWebFetchReachesThisMachineOnlyByAURLNamingIt(t *testing.T) {
	const secretText = "INTERNAL-ONLY-7f3a"
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, secretText)
	}))
	defer secret.Close()
	secretPort := secret.URL[strings.LastIndex(secret.URL, ":")+1:]
	var pagePort string
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-secret": // another host of this machine
			http.Redirect(w, r, "http://127.0.0.1:"+secretPort+"/", http.StatusFound)
		case "/to-zero": // 0.0.0.0 connects to this machine too
			http.Redirect(w, r, "http://0.0.0.0:"+secretPort+"/", http.StatusFound)
		case "/same": // the same host and port: fine
			http.Redirect(w, r, "http://localhost:"+pagePort+"/ok", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "the page itself")
		}
	}))
	defer page.Close()
	pagePort = page.URL[strings.LastIndex(page.URL, ":")+1:]

	inNS, hostsEnv := hostsNamespace(t, "127.0.0.1 localhost\n127.0.0.1 rebind.test\n")
	refused := map[string]string{
		"http://rebind.test:" + secretPort + "/":      "which its name does not say",
		"http://localhost:" + pagePort + "/to-secret": "does not follow a redirect there",
		"http://localhost:" + pagePort + "/to-zero":   "does not follow a redirect there",
		// Spellings of 127.0.0.1 that getaddrinfo (the cgo resolver)
		// reads as addresses: names, so never this machine's.
		"http://0x7f.1:" + secretPort + "/":       "",
		"http://2130706433:" + secretPort + "/":   "",
		"http://017700000001:" + secretPort + "/": "",
	}
	fetched := map[string]string{
		"http://127.0.0.1:" + secretPort + "/":   secretText, // named: the user saw it
		"http://[::1]:" + secretPort + "/":       "",         // (when the machine has IPv6)
		"http://localhost:" + pagePort + "/same": "the page itself",
	}
	var urls []string
	for u := range refused {
		urls = append(urls, u)
	}
	for u := range fetched {
		urls = append(urls, u)
	}
	p, sid := fetchingAgent(t, inNS, hostsEnv, urls)
	for i, u := range urls {
		resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("[fetch %d]", i))}})
		require.Nil(t, resp.Error)
		text, status := toolResultText(t, before, fmt.Sprintf("f%d", i))
		if says, ok := refused[u]; ok {
			assert.Equal(t, "failed", status, u)
			if says != "" {
				assert.Contains(t, text, says, u)
			}
			assert.NotContains(t, text, secretText, u)
			continue
		}
		if want := fetched[u]; want != "" {
			assert.Equal(t, "completed", status, "%s: %s", u, text)
			assert.Contains(t, text, want, u)
		} else {
			assert.NotContains(t, text, "on this machine", "%s: named, so not refused", u)
		}
	}
}

// fetchingAgent starts the agent (full-access, no sandbox) through inNS
// on a script whose prompt "[fetch i]" makes it call web_fetch (call id
// fi) on urls[i], and opens a session.
func fetchingAgent(t *testing.T, inNS func(argv ...string) *exec.Cmd, env string, urls []string) (*proc, string) {
	t.Helper()
	var turns []any
	for i, u := range urls {
		turns = append(turns, map[string]any{"match": fmt.Sprintf("[fetch %d]", i), "events": []any{
			map[string]any{"toolCall": map[string]any{"id": fmt.Sprintf("f%d", i), "name": "web_fetch", "arguments": map[string]any{"url": u}}}}})
	}
	turns = append(turns, map[string]any{"events": []any{map[string]any{"text": "done"}}})
	script := writeScript(t, map[string]any{"turns": turns})
	p := startAgentCmd(t, inNS(agentBin, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "off"), []string{env})
	p.Initialize(nil)
	return p, p.NewSession(t.TempDir())
}

// metadataNamespace is a network namespace (unshare) where the metadata
// address 100.100.100.200, its neighbour 100.100.100.201, the private
// 10.1.2.3 and fe80::1 are on the loopback interface and /etc/hosts names the first two
// metadata.test and neighbour.test: nothing leaves the machine, and a
// connection that is not refused before it is made is answered
// "connection refused" there. inNS makes the command that runs argv
// there (its environment must hold env). The test is skipped where no
// such namespace can be made.
func metadataNamespace(t *testing.T) (inNS func(argv ...string) *exec.Cmd, env string) {
	t.Helper()
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 localhost\n100.100.100.200 metadata.test\n100.100.100.201 neighbour.test\n"), 0o644))
	const setup = `set -e
ip link set lo up
ip addr add 100.100.100.200/32 dev lo
ip addr add 100.100.100.201/32 dev lo
ip addr add 10.1.2.3/32 dev lo
ip -6 addr add fe80::1/64 dev lo
mount --bind "$HOSTS" /etc/hosts
exec "$0" "$@"`
	if out, err := exec.Command("unshare", "-r", "-n", "-m", "sh", "-c", "HOSTS="+hosts+"\n"+setup, "true").CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here: %v %s", err, out)
	}
	return func(argv ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-r", "-n", "-m", "sh", "-c", setup}, argv...)...)
	}, "HOSTS=" + hosts
}

// TestBinaryRoutedProviderNeverReachesMetadataAddresses: a client routes
// a provider to an endpoint of its choice with headers of its choice
// (providers/set; over serve, a remote client). No model provider
// answers at a metadata address, and the machine's credentials do
// (Google's want only a Metadata-Flavor header), so the model requests
// of such a route are refused before they are made, by address or by a
// name resolving there, whatever the sandbox's network rule; a neighbour
// address is dialled.
func TestBinaryRoutedProviderNeverReachesMetadataAddresses(t *testing.T) {
	inNS, hostsEnv := metadataNamespace(t)
	cmd := inNS(agentBin, "--model", "openai/test-model", "--sandbox", "off")
	p := startAgentCmd(t, cmd, []string{hostsEnv, "ACP_AGENT_MAX_RETRIES=0", "ACP_AGENT_DISCOVER_MODELS=false"})
	p.Initialize(nil)
	for _, tc := range []struct {
		base    string
		refused bool
	}{
		{"http://100.100.100.200/latest/meta-data/iam/security-credentials/role", true},
		{"http://metadata.test/computeMetadata/v1/instance/service-accounts/default/token", true},
		{"http://[fe80::1%25lo]/v1", true},
		{"http://[::ffff:100.100.100.200]/v1", true},
		{"http://100.100.100.201/v1", false},
	} {
		resp := promptThroughRoute(t, p, tc.base)
		if tc.refused {
			assert.Contains(t, resp.Error.Message, "link-local or cloud metadata address", tc.base)
			assert.NotContains(t, resp.Error.Message, "connection refused", "%s: never dialled", tc.base)
		} else {
			assert.Contains(t, resp.Error.Message, "connection refused", "%s: dialled", tc.base)
		}
	}
}

// promptThroughRoute routes the openai provider to base with the
// headers a metadata service wants (providers/set, which must succeed)
// and prompts a new session, whose answer must be an error: it returns
// the prompt's response.
func promptThroughRoute(t *testing.T, p *proc, base string) acptest.Message {
	t.Helper()
	resp, _ := p.Call(acp.MethodProvidersSet, &acp.SetProviderRequest{ProviderID: "openai", APIType: "openai", BaseURL: base,
		Headers: map[string]string{"Metadata-Flavor": "Google", "Metadata": "true"}})
	require.Nil(t, resp.Error, "%s: %s", base, resp.Raw)
	sid := p.NewSession(t.TempDir())
	resp, _ = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	require.NotNil(t, resp.Error, base)
	return resp
}

// hostsNamespace is where a test's programs see /etc/hosts as lines say,
// the network being this machine's: a mount namespace (unshare) whose
// setup reads the variable env. inNS makes the command that runs argv
// there (its environment must hold env). The test is skipped where no
// such namespace can be made.
func hostsNamespace(t *testing.T, lines string) (inNS func(argv ...string) *exec.Cmd, env string) {
	t.Helper()
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte(lines), 0o644))
	const setup = `set -e
mount --bind "$HOSTS" /etc/hosts
exec "$0" "$@"`
	if out, err := exec.Command("unshare", "-r", "-m", "sh", "-c", "HOSTS="+hosts+"\n"+setup, "true").CombinedOutput(); err != nil {
		t.Skipf("cannot make a mount namespace here: %v %s", err, out)
	}
	return func(argv ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-r", "-m", "sh", "-c", setup}, argv...)...)
	}, "HOSTS=" + hosts
}
