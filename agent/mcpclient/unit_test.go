package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
)

func TestQualifiedNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		name string
		keys []toolKey
		want []string
	}{
		{
			name: "plain names stay readable",
			keys: []toolKey{{"fs", "read_file"}, {"git", "log"}},
			want: []string{"mcp__fs__read_file", "mcp__git__log"},
		},
		{
			name: "same tool on two servers",
			keys: []toolKey{{"a", "echo"}, {"b", "echo"}},
			want: []string{"mcp__a__echo", "mcp__b__echo"},
		},
		{
			name: "disallowed characters become underscores",
			keys: []toolKey{{"my.server", "get user/äpfel"}},
			want: []string{"mcp__my_server__get_user__pfel"},
		},
		{
			name: "names that sanitize alike both get hashes",
			keys: []toolKey{{"my.srv", "echo"}, {"my srv", "echo"}},
			want: []string{
				hashedName("mcp__my_srv__echo", toolKey{"my.srv", "echo"}, 0),
				hashedName("mcp__my_srv__echo", toolKey{"my srv", "echo"}, 0),
			},
		},
		{
			name: "too long is cut and hashed",
			keys: []toolKey{{"s", long}},
			want: []string{hashedName("mcp__s__"+long, toolKey{"s", long}, 0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := qualifiedNames(tt.keys)
			assert.Equal(t, tt.want, got)
			for _, n := range got {
				assert.Regexp(t, providerSafe, n)
			}
		})
	}
}

func TestQualifiedNamesDoNotDependOnOrder(t *testing.T) {
	keys := []toolKey{{"my.srv", "echo"}, {"b", "x"}, {"my srv", "echo"}, {"a", strings.Repeat("y", 80)}}
	want := qualifiedNames(keys)
	rev := []toolKey{keys[3], keys[2], keys[1], keys[0]}
	got := qualifiedNames(rev)
	assert.Equal(t, []string{want[3], want[2], want[1], want[0]}, got)
}

func TestQualifiedNamesResolveAHashedNameThatIsTaken(t *testing.T) {
	// A tool literally named like another's hashed name: the rule's step 3.
	h := hashedName("mcp__a__echo", toolKey{"a", "echo"}, 0)
	tool := strings.TrimPrefix(h, "mcp__a__")
	keys := []toolKey{{"a", "echo"}, {"b", "echo"}, {"a", tool}, {"a.", "echo"}}
	names := qualifiedNames(keys)
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
		assert.Regexp(t, providerSafe, n)
	}
}

func TestSameServerNameTwiceStillGivesUniqueNames(t *testing.T) {
	m := newManager(Options{})
	a := &server{name: "dup", connected: true, tools: []Tool{{Name: "echo"}}}
	b := &server{name: "dup", connected: true, tools: []Tool{{Name: "echo"}}}
	m.servers = []*server{a, b}
	m.rebuildLocked()
	require.Len(t, m.tools, 2)
	assert.Equal(t, []string{"mcp__dup_1__echo", "mcp__dup__echo"}, toolNames(m.tools), "the repeat is named as if it were dup_1")
	assert.Same(t, a, m.byName["mcp__dup__echo"].srv)
	assert.Same(t, b, m.byName["mcp__dup_1__echo"].srv)
}

func TestLineLoggerLogsOneRecordPerLine(t *testing.T) {
	log, logs := newTestLogger()
	w := &lineLogger{log: log}
	for _, chunk := range []string{"one\r\ntw", "o\n", "\n", "three"} {
		n, err := w.Write([]byte(chunk))
		require.NoError(t, err)
		require.Equal(t, len(chunk), n)
	}
	assert.NotContains(t, logs.String(), "three", "an unterminated line waits")
	w.Flush()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		_, v, _ := strings.Cut(l, "line=")
		lines = append(lines, v)
	}
	assert.Equal(t, []string{"one", "two", `""`, "three"}, lines)
}

func TestLineLoggerSplitsOverlongLines(t *testing.T) {
	log, logs := newTestLogger()
	w := &lineLogger{log: log}
	_, _ = w.Write([]byte(strings.Repeat("a", maxStderrLine+10) + "\n"))
	assert.Equal(t, 2, strings.Count(logs.String(), "mcp server stderr"))
}

func TestServerTransportAddsHeadersOnlyForTheServersOrigin(t *testing.T) {
	got := make(chan http.Header, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		http.Redirect(w, r, other.URL+"/x?token=s3cret", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()

	hc, err := httpClientFor(context.Background(), &http.Client{}, srv.URL, []HTTPHeader{
		{Name: "Authorization", Value: "Bearer t"},
		{Name: "X-Multi", Value: "1"},
		{Name: "X-Multi", Value: "2"},
		{Name: "Accept", Value: "text/plain"},
	})
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"secret":"args"}`))
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.ErrorIs(t, err, ErrCrossOriginRedirect)
	assert.ErrorContains(t, err, "redirected to "+other.URL+"/x")

	first := <-got
	assert.Equal(t, "Bearer t", first.Get("Authorization"))
	assert.Equal(t, []string{"1", "2"}, first.Values("X-Multi"))
	assert.Equal(t, "application/json", first.Get("Accept"), "the SDK's header wins")
	assert.Empty(t, got, "the other origin received nothing")
	assert.Empty(t, req.Header.Get("Authorization"), "the caller's request is not modified")
}

func TestSameOrigin(t *testing.T) {
	parse := func(s string) *url.URL {
		u, err := url.Parse(s)
		require.NoError(t, err)
		return u
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"http://h:1/a", "http://h:1/b?q", true},
		{"http://H:1/a", "HTTP://h:1/", true},
		{"http://h/a", "http://h:80/", true},
		{"https://h/a", "https://h:443/", true},
		{"http://h:1/", "http://h:2/", false},
		{"http://h/", "https://h/", false},
		{"https://h:80/", "http://h:80/", false},
		{"http://h/", "http://h.evil/", false},
		{"http://h/", "http://user@h2/", false},
	} {
		assert.Equal(t, c.same, sameOrigin(parse(c.a), parse(c.b)), "%s %s", c.a, c.b)
	}
}

func TestHTTPClientForRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"::not a url", "ftp://host/x", "http:///path", "localhost:8080"} {
		_, err := httpClientFor(context.Background(), &http.Client{}, u, nil)
		assert.Error(t, err, u)
	}
}

// An address in the URL is checked before anything is sent (a proxy
// would otherwise be asked to go there): metadata ones are refused,
// loopback and private ones are not.
func TestHTTPClientForRefusesMetadataAddresses(t *testing.T) {
	for u, refused := range map[string]bool{
		"http://169.254.169.254/latest/meta-data/": true,
		"http://[fe80::1%25eth0]:8080/mcp":         true,
		"http://[::ffff:100.100.100.200]/":         true,
		"https://[fd00:ec2::254]/":                 true,
		"http://127.0.0.1:3000/mcp":                false,
		"http://[::1]:3000/mcp":                    false,
		"http://10.0.0.7/mcp":                      false,
		"http://100.100.100.201/":                  false,
		"http://metadata.google.internal/":         false, // a name: the dialler's to check
	} {
		_, err := httpClientFor(context.Background(), &http.Client{}, u, nil)
		if refused {
			assert.ErrorContains(t, err, "link-local or cloud metadata address", u)
		} else {
			assert.NoError(t, err, u)
		}
	}
}

func TestConvertResult(t *testing.T) {
	size := int64(3)
	tests := []struct {
		name string
		in   *mcp.CallToolResult
		want Result
	}{
		{
			name: "audio",
			in:   &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: []byte("abc"), MIMEType: "audio/wav"}}},
			want: Result{Text: "[audio: audio/wav, 3 bytes]", Content: []agent.ContentBlock{{Type: agent.BlockAudio, Data: "YWJj", MIMEType: "audio/wav"}}},
		},
		{
			name: "blob resource becomes a link",
			in: &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "file:///x.bin", MIMEType: "application/octet-stream", Blob: []byte("abc"),
			}}}},
			want: Result{Text: "[resource: file:///x.bin]", Content: []agent.ContentBlock{{Type: agent.BlockResourceLink,
				URI: "file:///x.bin", Name: "file:///x.bin", MIMEType: "application/octet-stream", Size: &size,
			}}},
		},
		{
			name: "empty text resource shows its uri",
			in:   &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://e"}}}},
			want: Result{Text: "[resource: mem://e]", Content: []agent.ContentBlock{{Type: agent.BlockResource, URI: "mem://e"}}},
		},
		{
			name: "structured content only",
			in:   &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}},
			want: Result{Text: `{"n":1}`, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: `{"n":1}`}}},
		},
		{
			name: "error with text",
			in:   &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad"}, &mcp.TextContent{Text: "worse"}}},
			want: Result{IsError: true, Text: "bad\nworse", Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "bad"}, {Type: agent.BlockText, Text: "worse"}}},
		},
		{
			name: "nothing",
			in:   &mcp.CallToolResult{},
			want: Result{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, convertResult(tt.in))
		})
	}
}

func TestInputSchemaIsNeverNull(t *testing.T) {
	for _, in := range []any{nil, true, "x", json.RawMessage(`null`)} {
		assert.JSONEq(t, `{"type":"object"}`, string(inputSchema(in)), "%v", in)
	}
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(inputSchema(map[string]any{"type": "object", "properties": map[string]any{}})))
}

func TestChildEnvKeepsOnlyTheMinimalSubset(t *testing.T) {
	t.Setenv("PATH", "/bin")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	env := childEnv([]EnvVariable{{Name: "A", Value: "1"}, {Name: "PATH", Value: "/custom"}})
	assert.Contains(t, env, "PATH=/bin")
	assert.Equal(t, []string{"A=1", "PATH=/custom"}, env[len(env)-2:], "the client's variables come last, so they win")
	for _, kv := range env {
		assert.False(t, strings.HasPrefix(kv, "OPENAI_API_KEY="), "secrets are not inherited")
	}
}

func TestConnectWithNoServersGivesAnEmptyManager(t *testing.T) {
	m, failures := Connect(context.Background(), nil, Options{OnToolsChanged: func() {}})
	assert.Empty(t, failures)
	assert.Empty(t, m.Tools())
	assert.Empty(t, m.Servers())
	_, err := m.Call(context.Background(), "mcp__x__y", nil)
	assert.ErrorIs(t, err, ErrUnknownTool)
	assert.NoError(t, m.Close())
}

// A server's URL credentials stay out of its errors, and only they: a
// short user name or password (no credential) is left alone, where
// replacing it everywhere garbled the message ("http://er@host" turned
// "server" into "serv[redacted]").
func TestConnectErrorHidesURLCredentialsOnly(t *testing.T) {
	closed := httptest.NewServer(nil)
	base := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	m, failures := Connect(context.Background(), []Server{
		{HTTP: &HTTPServer{Name: "short", URL: "http://er@" + base + "/mcp"}},
		{HTTP: &HTTPServer{Name: "short-password", URL: "http://x:er@" + base + "/mcp"}},
		{HTTP: &HTTPServer{Name: "long", URL: "http://user:pass-5e1f9a@" + base + "/mcp?api_key=key-77c2d4"}},
	}, Options{OnToolsChanged: func() {}})
	t.Cleanup(func() { _ = m.Close() })
	require.Len(t, failures, 3)
	for _, f := range failures {
		msg := f.Err.Error()
		assert.Contains(t, msg, `mcp server "`+f.Server+`"`, "the message reads as written")
		assert.Contains(t, msg, "refused", "the failure is named: %s", msg)
		for _, secret := range []string{"pass-5e1f9a", "key-77c2d4"} {
			assert.NotContains(t, msg, secret)
		}
	}
}
