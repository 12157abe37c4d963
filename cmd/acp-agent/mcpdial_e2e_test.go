package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// mcpFailures reads the agent's messages after a session/new whose
// answer came with before, until the user was told about n MCP servers
// that could not be used, and returns what it was told per server.
func mcpFailures(t *testing.T, p *proc, before []acptest.Message, n int) map[string]string {
	t.Helper()
	told := regexp.MustCompile(`The MCP server "([^"]+)" could not be used: (.*)`)
	out := map[string]string{}
	take := func(m acptest.Message) {
		if m.Method != acp.MethodSessionUpdate {
			return
		}
		if c := m.Update(t).Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			if sm := told.FindStringSubmatch(c.Content.Text.Text); sm != nil {
				out[sm[1]] = sm[2]
			}
		}
	}
	for _, m := range before {
		take(m)
	}
	for len(out) < n {
		take(p.Next())
	}
	return out
}

// metadataMCPServers are MCP servers at link-local and cloud metadata
// addresses (refused: their failure must say so, never that a connection
// was refused) and at other addresses (dialled: in metadataNamespace
// nothing listens there, so "connection refused").
func metadataMCPServers() (servers []acp.McpServer, refused map[string]bool) {
	refused = map[string]bool{}
	add := func(name, url string, sse, refuse bool) {
		if sse {
			servers = append(servers, acp.McpServer{SSE: &acp.McpServerSse{Name: name, URL: url}})
		} else {
			servers = append(servers, acp.McpServer{HTTP: &acp.McpServerHttp{Name: name, URL: url,
				Headers: []acp.HttpHeader{{Name: "Metadata-Flavor", Value: "Google"}, {Name: "Metadata", Value: "true"}}}})
		}
		refused[name] = refuse
	}
	add("alibaba", "http://100.100.100.200/latest/meta-data/", false, true)
	add("by-name", "http://metadata.test/computeMetadata/v1/", false, true)
	add("by-name-sse", "http://metadata.test/sse", true, true)
	add("zoned", "http://[fe80::1%25lo]:8080/mcp", false, true)
	add("mapped", "http://[::ffff:100.100.100.200]/mcp", true, true)
	add("nat64", "http://[64:ff9b::a9fe:a9fe]/mcp", false, true)
	add("aws", "http://169.254.169.254/latest/meta-data/", false, true)
	add("neighbour", "http://100.100.100.201/mcp", false, false)
	add("neighbour-name", "http://neighbour.test/sse", true, false)
	add("private", "http://10.1.2.3/mcp", false, false)
	add("loopback", "http://127.0.0.1:9/mcp", true, false)
	return servers, refused
}

// checkMetadataFailures asserts what the user was told about each of
// metadataMCPServers.
func checkMetadataFailures(t *testing.T, failures map[string]string, refused map[string]bool) {
	t.Helper()
	for name, refuse := range refused {
		msg, ok := failures[name]
		require.True(t, ok, "%s: the user is told", name)
		if refuse {
			assert.Contains(t, msg, "link-local or cloud metadata address", name)
			assert.NotContains(t, msg, "connection refused", "%s: never dialled", name)
		} else {
			assert.Contains(t, msg, "connection refused", "%s: dialled", name)
		}
	}
}

// An HTTP or SSE MCP server the client names (session/new mcpServers;
// over serve a remote client, and an editor passes on what a project's
// own MCP config lists) is connected to by the agent itself, outside
// any sandbox, with headers of the client's choice: at a metadata
// address (Google's wants only a Metadata-Flavor header) that would read
// the machine's credentials. Such servers fail before a connection is
// made, by address or by a name resolving there; other addresses,
// loopback and private ones included, are dialled. The agent runs in a
// network namespace the test makes (metadataNamespace): nothing leaves
// the machine.
//
// With a proxy in the agent's environment an address in the URL is
// refused before the proxy is asked; a name is the proxy's to resolve
// (docs/security.md), so those servers are left out there.
func TestBinaryMCPServersNeverReachMetadataAddresses(t *testing.T) {
	inNS, hostsEnv := metadataNamespace(t)
	for name, env := range map[string][]string{
		"direct":     {hostsEnv},
		"with proxy": {hostsEnv, "HTTP_PROXY=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9"},
	} {
		t.Run(name, func(t *testing.T) {
			p := startAgentCmd(t, inNS(agentBin, "--model", "replay/default", "--sandbox", "off"), env)
			p.Initialize(nil)
			servers, refused := metadataMCPServers()
			if len(env) > 1 {
				delete(refused, "by-name")
				delete(refused, "by-name-sse")
			}
			resp, before := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: servers})
			acptest.MustResult(t, resp, nil)
			failures := mcpFailures(t, p, before, len(servers))
			checkMetadataFailures(t, failures, refused)
			if len(env) > 1 {
				assert.Contains(t, failures["neighbour"], "proxyconnect", "the proxy is asked")
			}
		})
	}
}

// Over serve the client is a remote one, and the rule is the same: the
// serve process refuses the metadata servers a remote client names and
// dials the others. serve and connect run in one network namespace the
// test makes; the test speaks to connect's stdio. serve dies with the
// shell that started it (pdeathsig), so nothing outlives the test.
func TestServeMCPServersNeverReachMetadataAddresses(t *testing.T) {
	inNS, hostsEnv := metadataNamespace(t)
	root, state := t.TempDir(), t.TempDir()
	const script = `setpriv --pdeathsig KILL "$AGENT" serve --listen 127.0.0.1:7420 --root "$ROOT" --token-file "$STATE/token" \
	--model replay/default --sandbox off --session-dir "$STATE/sessions" 2>"$STATE/serve.log" &
serve=$!
until grep -q "listening on" "$STATE/serve.log"; do
	kill -0 $serve || { cat "$STATE/serve.log" >&2; exit 1; }
	sleep 0.05
done
"$AGENT" connect --token-file "$STATE/token" http://127.0.0.1:7420/acp
rc=$?
kill $serve; wait $serve
cat "$STATE/serve.log" >&2
exit $rc`
	p := startAgentCmd(t, inNS("sh", "-c", script), []string{hostsEnv, "AGENT=" + agentBin, "ROOT=" + root, "STATE=" + state})
	p.Client.AnnouncesCommands = false
	p.Initialize(nil)
	servers, refused := metadataMCPServers()
	resp, before := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: root, MCPServers: servers})
	acptest.MustResult(t, resp, nil)
	checkMetadataFailures(t, mcpFailures(t, p, before, len(servers)), refused)
}

// The rule keeps the MCP servers users run: one on this machine's
// loopback, streamable HTTP and SSE, connects, and its tool answers the
// model.
func TestBinaryMCPServerOnLoopbackStillWorks(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "local", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "answers pong"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong from loopback"}}}, nil, nil
		})
	get := func(*http.Request) *mcp.Server { return srv }
	// Closed after the agent (cleanups run last first): Close waits for
	// the agent's open streams.
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(get, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(get, nil))
	t.Cleanup(sse.Close)

	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[http]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "h1", "name": "mcp__local-http__ping", "arguments": map[string]any{}}}}},
		map[string]any{"match": "[sse]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "s1", "name": "mcp__local-sse__ping", "arguments": map[string]any{}}}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "off")
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{
		{HTTP: &acp.McpServerHttp{Name: "local-http", URL: streamable.URL}},
		{SSE: &acp.McpServerSse{Name: "local-sse", URL: sse.URL}},
	}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	for prompt, id := range map[string]string{"[http]": "h1", "[sse]": "s1"} {
		resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}})
		require.Nil(t, resp.Error)
		text, status := toolResultText(t, before, id)
		assert.Equal(t, "completed", status, "%s: %s", prompt, text)
		assert.Contains(t, text, "pong from loopback", prompt)
	}
}
