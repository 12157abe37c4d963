package acp

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func typesMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// typesRoundTrip decodes in into a new T, re-encodes it and returns both.
func typesRoundTrip[T any](t *testing.T, in string) (*T, string) {
	t.Helper()
	v := new(T)
	require.NoError(t, json.Unmarshal([]byte(in), v))
	return v, typesMarshal(t, v)
}

func TestUnionUnknownVariantsRoundTrip(t *testing.T) {
	t.Run("sessionUpdate", func(t *testing.T) {
		in := `{"sessionId":"s1","update":{"sessionUpdate":"plan_future","plan":{"type":"items","planId":"p1","entries":[]},"x":[1,2.5,null]}}`
		n, out := typesRoundTrip[SessionNotification](t, in)
		require.NotNil(t, n.Update.Unknown)
		assert.Equal(t, "plan_future", n.Update.Unknown.Tag)
		assert.Equal(t, "plan_future", n.Update.Tag())
		assert.Equal(t, in, out, "unknown variant must be re-encoded verbatim")
	})
	t.Run("content type", func(t *testing.T) {
		in := `{"sessionId":"s1","prompt":[{"type":"text","text":"hi"},{"type":"video","data":"AAAA","mimeType":"video/mp4","_meta":{"k":1}}]}`
		p, out := typesRoundTrip[PromptRequest](t, in)
		require.Len(t, p.Prompt, 2)
		require.NotNil(t, p.Prompt[1].Unknown)
		assert.Equal(t, "video", p.Prompt[1].Tag())
		assert.Equal(t, in, out)
		assert.NoError(t, p.Validate(), "unknown blocks are left to the agent")
	})
	t.Run("permission outcome", func(t *testing.T) {
		in := `{"outcome":{"outcome":"deferred","until":"later"}}`
		r, out := typesRoundTrip[RequestPermissionResponse](t, in)
		require.NotNil(t, r.Outcome.Unknown)
		assert.Equal(t, "deferred", r.Outcome.Tag())
		assert.Equal(t, in, out)
	})
	t.Run("tool call content type", func(t *testing.T) {
		in := `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"type":"image_diff","path":"/a.png"}]}}`
		n, out := typesRoundTrip[SessionNotification](t, in)
		require.NotNil(t, n.Update.ToolCall)
		require.NotNil(t, n.Update.ToolCall.Content[0].Unknown)
		assert.Equal(t, "image_diff", n.Update.ToolCall.Content[0].Tag())
		assert.JSONEq(t, in, out)
	})
	t.Run("mcp server type", func(t *testing.T) {
		in := `{"cwd":"/w","mcpServers":[{"type":"pipe","name":"x","serverId":"srv1"}]}`
		r, out := typesRoundTrip[NewSessionRequest](t, in)
		require.NotNil(t, r.MCPServers[0].Unknown)
		assert.Equal(t, "pipe", r.MCPServers[0].Tag())
		assert.Equal(t, in, out)
		assert.NoError(t, r.Validate())
	})
	t.Run("auth method type", func(t *testing.T) {
		in := `{"protocolVersion":1,"authMethods":[{"type":"env_var","id":"k","name":"Key","varName":"API_KEY"}]}`
		r, out := typesRoundTrip[InitializeResponse](t, in)
		require.NotNil(t, r.AuthMethods[0].Unknown)
		assert.Equal(t, in, out)
	})
	t.Run("config option type", func(t *testing.T) {
		in := `{"configOptions":[{"id":"temp","name":"Temperature","type":"slider","min":0,"max":1,"currentValue":0.7}]}`
		r, out := typesRoundTrip[SetSessionConfigOptionResponse](t, in)
		o := r.ConfigOptions[0]
		require.NotNil(t, o.Unknown)
		assert.Equal(t, "slider", o.Tag())
		assert.Equal(t, "temp", o.ID, "common members are still decoded")
		assert.Equal(t, in, out)
	})
	t.Run("elicitation mode and property type", func(t *testing.T) {
		in := `{"message":"m","mode":"oauth","sessionId":"s","scopes":["repo"]}`
		r, out := typesRoundTrip[CreateElicitationRequest](t, in)
		require.NotNil(t, r.Unknown)
		assert.Equal(t, "oauth", r.Tag())
		assert.Equal(t, "m", r.Message)
		assert.Equal(t, in, out)

		in = `{"message":"m","mode":"form","sessionId":"s","requestedSchema":{"properties":{"f":{"type":"file","accept":"image/*"}}}}`
		r, out = typesRoundTrip[CreateElicitationRequest](t, in)
		require.NotNil(t, r.Form)
		require.NotNil(t, r.Form.RequestedSchema.Properties["f"].Unknown)
		assert.JSONEq(t, in, out)
	})
	t.Run("set config option value type", func(t *testing.T) {
		in := `{"sessionId":"s","configId":"temp","type":"number","value":0.5}`
		r, out := typesRoundTrip[SetSessionConfigOptionRequest](t, in)
		require.NotNil(t, r.Value.Unknown)
		assert.Equal(t, "number", r.Value.Unknown.Tag)
		assert.JSONEq(t, in, out)
		assert.NoError(t, r.Validate())
	})
	t.Run("command input shape", func(t *testing.T) {
		in := `{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"n","description":"d","input":{"schema":{"type":"object"}}}]}}`
		n, out := typesRoundTrip[SessionNotification](t, in)
		require.NotNil(t, n.Update.AvailableCommandsUpdate.AvailableCommands[0].Input.Unknown)
		assert.JSONEq(t, in, out)
	})
}

func TestUnionUnknownVariantIsCompacted(t *testing.T) {
	var u SessionUpdate
	require.NoError(t, json.Unmarshal([]byte("{\n  \"sessionUpdate\": \"plan_removed\",\n  \"planId\": \"p1\"\n}"), &u))
	b, err := u.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"sessionUpdate":"plan_removed","planId":"p1"}`, string(b))
}

func TestUnionMissingTagIsAnError(t *testing.T) {
	var n SessionNotification
	err := json.Unmarshal([]byte(`{"sessionId":"s","update":{"content":{"type":"text","text":"x"}}}`), &n)
	assert.ErrorContains(t, err, `"sessionUpdate"`)
	var c ContentBlock
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"text":"x"}`), &c), `"type"`)
	var r RequestPermissionResponse
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"outcome":{"optionId":"x"}}`), &r), `"outcome"`)
}

func TestUnionEmptyMarshalFails(t *testing.T) {
	for name, v := range map[string]any{
		"SessionUpdate":            SessionNotification{SessionID: "s"},
		"ContentBlock":             ContentBlock{},
		"ToolCallContent":          ToolCallContent{},
		"RequestPermissionOutcome": RequestPermissionResponse{},
		"McpServer":                McpServer{},
		"AuthMethod":               AuthMethod{},
		"SessionConfigOption":      SessionConfigOption{ID: "x", Name: "x"},
		"SetSessionConfigOption":   SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "c"},
	} {
		_, err := json.Marshal(v)
		assert.ErrorContains(t, err, "no variant set", name)
	}
}

func TestUnionTagSplicing(t *testing.T) {
	assert.Equal(t, `{"outcome":"cancelled"}`, typesMarshal(t, RequestPermissionOutcome{Cancelled: &CancelledPermissionOutcome{}}))
	assert.Equal(t, `{"outcome":"selected","optionId":"allow"}`, typesMarshal(t, RequestPermissionOutcome{Selected: &SelectedPermissionOutcome{OptionID: "allow"}}))
	assert.Equal(t, `{"type":"terminal","terminalId":"t1"}`, typesMarshal(t, ToolCallContent{Terminal: &Terminal{TerminalID: "t1"}}))
	assert.Equal(t, `{"name":"fs","command":"/bin/fs","args":[],"env":[]}`, typesMarshal(t, McpServer{Stdio: &McpServerStdio{Name: "fs", Command: "/bin/fs"}}))
	assert.Equal(t, `{"type":"http","name":"gh","url":"https://x","headers":[]}`, typesMarshal(t, McpServer{HTTP: &McpServerHttp{Name: "gh", URL: "https://x"}}))
	assert.Equal(t, `{"id":"k","name":"Key"}`, typesMarshal(t, AuthMethod{Agent: &AuthMethodAgent{ID: "k", Name: "Key"}}))
	assert.Equal(t, `{"type":"terminal","id":"t","name":"Login"}`, typesMarshal(t, AuthMethod{Terminal: &AuthMethodTerminal{ID: "t", Name: "Login"}}))
	// HTML-sensitive characters are escaped the same way as by encoding/json.
	assert.Equal(t, `{"type":"text","text":"a\u003cb\u003e \u0026 \"q\"\n"}`, typesMarshal(t, TextBlock("a<b> & \"q\"\n")))
}

func TestTypesConstructors(t *testing.T) {
	assert.Equal(t, `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}`,
		typesMarshal(t, SessionNotification{SessionID: "s1", Update: AgentMessageChunk("hello")}))
	assert.Equal(t, `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`, typesMarshal(t, AgentThoughtChunk("hmm")))
	assert.Equal(t, `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`, typesMarshal(t, UserMessageChunk(TextBlock("hi"))))
	assert.Equal(t, "agent_message_chunk", AgentMessageChunk("x").Tag())
	assert.Equal(t, "user_message_chunk", UserMessageChunk(TextBlock("x")).Tag())
	assert.Equal(t, "", SessionUpdate{}.Tag())
	assert.Equal(t, "text", TextBlock("x").Tag())
}

func TestTypesMetaSurvivesNestedRoundTrip(t *testing.T) {
	in := `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t",` +
		`"content":[{"type":"content","content":{"type":"resource","resource":{"uri":"file:///a","text":"x","_meta":{"d":4}},"annotations":{"priority":0.5,"_meta":{"e":5}},"_meta":{"c":3}},"_meta":{"b":2}}],` +
		`"locations":[{"path":"/a","_meta":{"f":[6]}}],"_meta":{"a":1}},"_meta":{"traceparent":"00-1-2-01"}}`
	n, out := typesRoundTrip[SessionNotification](t, in)
	assert.JSONEq(t, in, out)
	tc := n.Update.ToolCall
	require.NotNil(t, tc)
	assert.JSONEq(t, `{"traceparent":"00-1-2-01"}`, string(n.Meta))
	assert.JSONEq(t, `{"a":1}`, string(tc.Meta))
	assert.JSONEq(t, `{"b":2}`, string(tc.Content[0].Content.Meta))
	res := tc.Content[0].Content.Content.Resource
	require.NotNil(t, res)
	assert.JSONEq(t, `{"c":3}`, string(res.Meta))
	assert.JSONEq(t, `{"d":4}`, string(res.Resource.Text.Meta))
	assert.JSONEq(t, `{"e":5}`, string(res.Annotations.Meta))
	assert.JSONEq(t, `{"f":[6]}`, string(tc.Locations[0].Meta))

	// Capability objects and flattened types keep their _meta too.
	in = `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"_meta":{"x":1}},"session":{"configOptions":{"boolean":{"_meta":{"y":2}}}},"_meta":{"z":3}}}`
	_, out = typesRoundTrip[InitializeRequest](t, in)
	assert.JSONEq(t, in, out)
	in = `{"configOptions":[{"id":"m","name":"M","type":"select","currentValue":"a","options":[{"value":"a","name":"A","_meta":{"o":1}}],"_meta":{"p":2}}]}`
	_, out = typesRoundTrip[SetSessionConfigOptionResponse](t, in)
	assert.JSONEq(t, in, out)
	// An explicit null _meta is kept (it clears metadata in compaction_update).
	in = `{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"c","status":"completed","_meta":null}}`
	_, out = typesRoundTrip[SessionNotification](t, in)
	assert.Equal(t, in, out)
}

func TestTypesNilRequiredSlicesEncodeAsArrays(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{NewSessionRequest{CWD: "/w"}, `{"cwd":"/w","mcpServers":[]}`},
		{LoadSessionRequest{SessionID: "s", CWD: "/w"}, `{"sessionId":"s","cwd":"/w","mcpServers":[]}`},
		{Plan{}, `{"entries":[]}`},
		{SessionUpdate{Plan: &Plan{}}, `{"sessionUpdate":"plan","entries":[]}`},
		{McpServerStdio{Name: "n", Command: "/c"}, `{"name":"n","command":"/c","args":[],"env":[]}`},
		{McpServerHttp{Name: "n", URL: "u"}, `{"name":"n","url":"u","headers":[]}`},
		{McpServerSse{Name: "n", URL: "u"}, `{"name":"n","url":"u","headers":[]}`},
		{AvailableCommandsUpdate{}, `{"availableCommands":[]}`},
		{SessionUpdate{AvailableCommandsUpdate: &AvailableCommandsUpdate{}}, `{"sessionUpdate":"available_commands_update","availableCommands":[]}`},
		{ConfigOptionUpdate{}, `{"configOptions":[]}`},
		{SetSessionConfigOptionResponse{}, `{"configOptions":[]}`},
		{PromptRequest{SessionID: "s"}, `{"sessionId":"s","prompt":[]}`},
		{ListSessionsResponse{}, `{"sessions":[]}`},
		{SessionModeState{CurrentModeID: "a"}, `{"currentModeId":"a","availableModes":[]}`},
		{RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "c"}}, `{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}`},
		{SessionConfigSelectGroup{Group: "g", Name: "G"}, `{"group":"g","name":"G","options":[]}`},
		{SessionConfigSelect{CurrentValue: "a"}, `{"currentValue":"a","options":[]}`},
		{StringMultiSelectItems{}, `{"enum":[]}`},
		{TitledMultiSelectItems{}, `{"anyOf":[]}`},
		// Optional arrays: nil is omitted, empty is kept (ToolCallUpdate: [] clears).
		{ToolCallUpdate{ToolCallID: "c"}, `{"toolCallId":"c"}`},
		{ToolCallUpdate{ToolCallID: "c", Content: []ToolCallContent{}}, `{"toolCallId":"c","content":[]}`},
		// Required requestId: nil is null.
		{CancelRequestNotification{}, `{"requestId":null}`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, typesMarshal(t, c.v), "%T", c.v)
	}
}

func TestTypesEmptyResultsEncodeAsObjects(t *testing.T) {
	for _, v := range []any{
		AuthenticateResponse{}, &AuthenticateResponse{}, LogoutRequest{}, LogoutResponse{},
		LoadSessionResponse{}, ResumeSessionResponse{}, CloseSessionResponse{}, DeleteSessionResponse{},
		SetSessionModeResponse{}, WriteTextFileResponse{}, KillTerminalResponse{}, ReleaseTerminalResponse{},
		WaitForTerminalExitResponse{}, ListSessionsRequest{}, InitializeResponse{ProtocolVersion: 1}.AgentCapabilities,
		ClientCapabilities{}, SessionCapabilities{}, SessionListCapabilities{}, CancelledPermissionOutcome{},
	} {
		assert.Equal(t, "{}", typesMarshal(t, v), "%T", v)
	}
	assert.Equal(t, `{"protocolVersion":1}`, typesMarshal(t, InitializeResponse{ProtocolVersion: ProtocolVersionV1}))
	assert.Equal(t, `{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"list":{}}}}`,
		typesMarshal(t, InitializeResponse{ProtocolVersion: 1, AgentCapabilities: AgentCapabilities{SessionCapabilities: SessionCapabilities{List: &SessionListCapabilities{}}}}))
}

func TestTypesNullable(t *testing.T) {
	cases := []struct {
		in    string
		title Nullable[string]
	}{
		{`{}`, Nullable[string]{}},
		{`{"title":null}`, Null[string]()},
		{`{"title":"T"}`, NullableOf("T")},
		{`{"title":""}`, NullableOf("")},
	}
	for _, c := range cases {
		u, out := typesRoundTrip[SessionInfoUpdate](t, c.in)
		assert.Equal(t, c.title, u.Title, c.in)
		assert.Equal(t, c.in, out)
	}
	v, ok := NullableOf("x").Get()
	assert.True(t, ok)
	assert.Equal(t, "x", v)
	_, ok = Null[string]().Get()
	assert.False(t, ok)
	_, ok = Nullable[string]{}.Get()
	assert.False(t, ok)
	assert.Equal(t, `{"compactionId":"c","status":"failed","summary":[],"error":null}`,
		typesMarshal(t, CompactionUpdate{CompactionID: "c", Status: CompactionStatusFailed, Summary: NullableOf([]ContentBlock{}), Error: Null[string]()}))
}

func TestTypesSelectOptionsShapes(t *testing.T) {
	flat, out := typesRoundTrip[SessionConfigSelectOptions](t, `[{"value":"a","name":"A"}]`)
	assert.Len(t, flat.Options, 1)
	assert.Nil(t, flat.Groups)
	assert.Equal(t, `[{"value":"a","name":"A"}]`, out)
	grouped, out := typesRoundTrip[SessionConfigSelectOptions](t, `[{"group":"g","name":"G","options":[{"value":"a","name":"A"}]}]`)
	assert.Len(t, grouped.Groups, 1)
	assert.Equal(t, `[{"group":"g","name":"G","options":[{"value":"a","name":"A"}]}]`, out)
	empty, out := typesRoundTrip[SessionConfigSelectOptions](t, `[]`)
	assert.NotNil(t, empty.Options)
	assert.Equal(t, `[]`, out)
}

func TestTypesEmbeddedResourceShapes(t *testing.T) {
	var r EmbeddedResourceResource
	require.NoError(t, json.Unmarshal([]byte(`{"uri":"u","blob":"AA=="}`), &r))
	assert.NotNil(t, r.Blob)
	require.NoError(t, json.Unmarshal([]byte(`{"uri":"u","text":""}`), &r))
	assert.NotNil(t, r.Text)
	assert.Nil(t, r.Blob)
	assert.Error(t, json.Unmarshal([]byte(`{"uri":"u"}`), &r))
}

func TestTypesElicitationContentValues(t *testing.T) {
	in := `{"action":"accept","content":{"s":"x","i":-3,"n":2.5,"e":1e3,"b":false,"l":["a","b"],"z":[]}}`
	r, out := typesRoundTrip[CreateElicitationResponse](t, in)
	c := r.Content
	assert.Equal(t, "x", *c["s"].String)
	assert.Equal(t, int64(-3), *c["i"].Integer)
	assert.Equal(t, 2.5, *c["n"].Number)
	assert.Equal(t, 1000.0, *c["e"].Number)
	assert.False(t, *c["b"].Boolean)
	assert.Equal(t, []string{"a", "b"}, c["l"].Strings)
	assert.Equal(t, []string{}, c["z"].Strings)
	assert.JSONEq(t, in, out)
}

func TestTypesSetSessionConfigOptionValue(t *testing.T) {
	r, out := typesRoundTrip[SetSessionConfigOptionRequest](t, `{"sessionId":"s","configId":"m","value":"fast"}`)
	require.NotNil(t, r.Value.ValueID)
	assert.Equal(t, "fast", *r.Value.ValueID)
	assert.Equal(t, `{"sessionId":"s","configId":"m","value":"fast"}`, out)
	r, out = typesRoundTrip[SetSessionConfigOptionRequest](t, `{"sessionId":"s","configId":"t","type":"boolean","value":false}`)
	require.NotNil(t, r.Value.Bool)
	assert.False(t, *r.Value.Bool)
	assert.Equal(t, `{"sessionId":"s","configId":"t","type":"boolean","value":false}`, out)

	var bad SetSessionConfigOptionRequest
	assert.EqualError(t, json.Unmarshal([]byte(`{"sessionId":"s","configId":"t","type":"boolean","value":"yes"}`), &bad), "value: must be a boolean")
	assert.EqualError(t, json.Unmarshal([]byte(`{"sessionId":"s","configId":"t","value":true}`), &bad), "value: must be a string")
}

func TestTypesInitializeProtocolVersion(t *testing.T) {
	var r InitializeRequest
	require.NoError(t, json.Unmarshal([]byte(`{"protocolVersion":0}`), &r))
	assert.NoError(t, r.Validate())
	assert.Equal(t, ProtocolVersion(0), r.ProtocolVersion)
	require.NoError(t, json.Unmarshal([]byte(`{"protocolVersion":65535,"clientInfo":{"name":"c","version":"1"}}`), &r))
	assert.Equal(t, ProtocolVersion(65535), r.ProtocolVersion)
	assert.Equal(t, "c", r.ClientInfo.Name)
	for _, in := range []string{`{"protocolVersion":"1.0.0"}`, `{"protocolVersion":-1}`, `{"protocolVersion":65536}`, `{"protocolVersion":1.5}`} {
		assert.EqualError(t, json.Unmarshal([]byte(in), &r), "protocolVersion: must be an integer between 0 and 65535", in)
	}
	// A value built in Go (not decoded) is valid.
	assert.NoError(t, (&InitializeRequest{ProtocolVersion: ProtocolVersionV1}).Validate())
}

// typesValidator is implemented by the agent-side request params.
type typesValidator interface{ Validate() error }

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name    string
		v       typesValidator
		in      string
		wantErr string // "" = valid
	}{
		{"initialize ok", &InitializeRequest{}, `{"protocolVersion":1}`, ""},
		{"initialize missing version", &InitializeRequest{}, `{"clientCapabilities":{}}`, "protocolVersion: required"},
		{"initialize null version", &InitializeRequest{}, `{"protocolVersion":null}`, "protocolVersion: required"},
		{"authenticate", &AuthenticateRequest{}, `{}`, "methodId: required"},
		{"authenticate ok", &AuthenticateRequest{}, `{"methodId":"k"}`, ""},
		{"new ok", &NewSessionRequest{}, `{"cwd":"/w","mcpServers":[]}`, ""},
		{"new no cwd", &NewSessionRequest{}, `{"mcpServers":[]}`, "cwd: required"},
		{"new relative cwd", &NewSessionRequest{}, `{"cwd":"proj","mcpServers":[]}`, "cwd: must be an absolute path"},
		{"new no mcpServers", &NewSessionRequest{}, `{"cwd":"/w"}`, "mcpServers: required"},
		{"new null mcpServers", &NewSessionRequest{}, `{"cwd":"/w","mcpServers":null}`, "mcpServers: required"},
		{"new stdio without command", &NewSessionRequest{}, `{"cwd":"/w","mcpServers":[{"name":"a","command":"/a","args":[],"env":[]},{"name":"b","args":[],"env":[]}]}`, "mcpServers[1].command: required"},
		{"new http without url", &NewSessionRequest{}, `{"cwd":"/w","mcpServers":[{"type":"http","name":"a","headers":[]}]}`, "mcpServers[0].url: required"},
		{"new relative dir", &NewSessionRequest{}, `{"cwd":"/w","mcpServers":[],"additionalDirectories":["/x","y"]}`, "additionalDirectories[1]: must be an absolute path"},
		{"load ok", &LoadSessionRequest{}, `{"sessionId":"s","cwd":"/w","mcpServers":[]}`, ""},
		{"load no session", &LoadSessionRequest{}, `{"cwd":"/w","mcpServers":[]}`, "sessionId: required"},
		{"load no mcpServers", &LoadSessionRequest{}, `{"sessionId":"s","cwd":"/w"}`, "mcpServers: required"},
		{"load relative cwd", &LoadSessionRequest{}, `{"sessionId":"s","cwd":"./w","mcpServers":[]}`, "cwd: must be an absolute path"},
		{"resume ok without mcpServers", &ResumeSessionRequest{}, `{"sessionId":"s","cwd":"/w"}`, ""},
		{"resume no cwd", &ResumeSessionRequest{}, `{"sessionId":"s"}`, "cwd: required"},
		{"resume no session", &ResumeSessionRequest{}, `{"cwd":"/w"}`, "sessionId: required"},
		{"fork ok", &ForkSessionRequest{}, `{"sessionId":"s","cwd":"/w"}`, ""},
		{"fork relative cwd", &ForkSessionRequest{}, `{"sessionId":"s","cwd":"w"}`, "cwd: must be an absolute path"},
		{"close", &CloseSessionRequest{}, `{}`, "sessionId: required"},
		{"close empty id", &CloseSessionRequest{}, `{"sessionId":""}`, "sessionId: required"},
		{"delete", &DeleteSessionRequest{}, `{}`, "sessionId: required"},
		{"delete parent path", &DeleteSessionRequest{}, `{"sessionId":"../x"}`, `sessionId: invalid session id "../x": starts with a dot`},
		{"delete dotdot inside", &DeleteSessionRequest{}, `{"sessionId":"a..b"}`, `sessionId: invalid session id "a..b": contains ".."`},
		{"delete absolute", &DeleteSessionRequest{}, `{"sessionId":"/etc/x"}`, `sessionId: invalid session id "/etc/x": allowed are ASCII letters, digits, '-', '_' and '.'`},
		{"load NUL", &LoadSessionRequest{}, `{"sessionId":"a\u0000b","cwd":"/w","mcpServers":[]}`, `sessionId: invalid session id "a\x00b": allowed are ASCII letters, digits, '-', '_' and '.'`},
		{"prompt too long", &PromptRequest{}, `{"sessionId":"` + strings.Repeat("a", 129) + `","prompt":[]}`, `sessionId: invalid session id "` + strings.Repeat("a", 129) + `": 129 bytes, the limit is 128`},
		{"cancel slash", &CancelNotification{}, `{"sessionId":"a/b"}`, `sessionId: invalid session id "a/b": allowed are ASCII letters, digits, '-', '_' and '.'`},
		{"uuid ok", &CloseSessionRequest{}, `{"sessionId":"0b5e4c52-4a9f-4f7e-9d35-1c0a3c7d2e11"}`, ""},
		{"dotted ok", &CloseSessionRequest{}, `{"sessionId":"a.b_c-1"}`, ""},
		{"list ok empty", &ListSessionsRequest{}, `{}`, ""},
		{"list relative cwd", &ListSessionsRequest{}, `{"cwd":"w"}`, "cwd: must be an absolute path"},
		{"set mode no mode", &SetSessionModeRequest{}, `{"sessionId":"s"}`, "modeId: required"},
		{"set mode no session", &SetSessionModeRequest{}, `{"modeId":"m"}`, "sessionId: required"},
		{"set config no config", &SetSessionConfigOptionRequest{}, `{"sessionId":"s","value":"v"}`, "configId: required"},
		{"set config no value", &SetSessionConfigOptionRequest{}, `{"sessionId":"s","configId":"c"}`, "value: required"},
		{"set config ok", &SetSessionConfigOptionRequest{}, `{"sessionId":"s","configId":"c","type":"boolean","value":true}`, ""},
		{"prompt ok", &PromptRequest{}, `{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}`, ""},
		{"prompt empty array ok", &PromptRequest{}, `{"sessionId":"s","prompt":[]}`, ""},
		{"prompt missing", &PromptRequest{}, `{"sessionId":"s"}`, "prompt: required"},
		{"prompt null item", &PromptRequest{}, `{"sessionId":"s","prompt":[null]}`, "prompt[0]: required"},
		{"prompt no session", &PromptRequest{}, `{"prompt":[]}`, "sessionId: required"},
		{"cancel", &CancelNotification{}, `{}`, "sessionId: required"},
		{"cancel ok", &CancelNotification{}, `{"sessionId":"s"}`, ""},
		{"cancel request", &CancelRequestNotification{}, `{}`, "requestId: required"},
		{"cancel request null id", &CancelRequestNotification{}, `{"requestId":null}`, ""},
		{"cancel request string id", &CancelRequestNotification{}, `{"requestId":"r1"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, json.Unmarshal([]byte(c.in), c.v))
			err := c.v.Validate()
			if c.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, c.wantErr)
			}
		})
	}
}

// TestTypesMethodNames checks the method constants against meta.json and
// meta.unstable.json (session/fork).
func TestTypesMethodNames(t *testing.T) {
	ours := []string{
		MethodInitialize, MethodAuthenticate, MethodLogout, MethodSessionNew, MethodSessionLoad,
		MethodSessionResume, MethodSessionClose, MethodSessionList, MethodSessionDelete,
		MethodSessionSetMode, MethodSessionSetConfigOption, MethodSessionPrompt, MethodSessionCancel,
		MethodSessionUpdate, MethodSessionRequestPermission, MethodFSReadTextFile, MethodFSWriteTextFile,
		MethodTerminalCreate, MethodTerminalOutput, MethodTerminalWaitForExit, MethodTerminalKill,
		MethodTerminalRelease, MethodElicitationCreate, MethodElicitationComplete, MethodCancelRequest,
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "acp-schema", "v1", "meta.json"))
	require.NoError(t, err)
	var meta map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &meta))
	var fromMeta []string
	for _, group := range []string{"agentMethods", "clientMethods", "protocolMethods"} {
		var m map[string]string
		require.NoError(t, json.Unmarshal(meta[group], &m))
		for _, name := range m {
			fromMeta = append(fromMeta, name)
		}
	}
	sort.Strings(ours)
	sort.Strings(fromMeta)
	assert.Equal(t, fromMeta, ours)

	data, err = os.ReadFile(filepath.Join("..", "testdata", "acp-schema", "v1", "meta.unstable.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"`+MethodSessionFork+`"`)
}

// TestUnionAppendJSONString checks the fast-path string encoder against
// encoding/json on tricky and random inputs.
func TestUnionAppendJSONString(t *testing.T) {
	inputs := []string{
		"", "plain", `"quoted" \ back\slash`, "<script>&amp;</script>", "tab\tnl\ncr\r bs\b ff\f",
		"\x00\x01\x1f\x7f", "é ü 日本語 🎉", "\u2028 line sep \u2029 para sep",
		"bad utf8 \xff\xfe \xc3\x28 \xe2\x82", "trailing \xe2", "\xed\xa0\x80 surrogate",
	}
	for b := 0; b < 256; b++ {
		inputs = append(inputs, string([]byte{'a', byte(b), 'z'}))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		buf := make([]byte, rng.IntN(24))
		for i := range buf {
			buf[i] = byte(rng.IntN(256))
		}
		inputs = append(inputs, string(buf))
	}
	for _, in := range inputs {
		want, err := json.Marshal(in)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, in)), "%q", in)
	}
}

// TestUnionFastPathMatchesGeneric checks the hand-written chunk encoding
// against the generic one (marshal the variant struct, splice the tag).
func TestUnionFastPathMatchesGeneric(t *testing.T) {
	chunks := []*ContentChunk{
		{Content: TextBlock("hello <world> & \"you\"\n")},
		{Content: TextBlock(""), MessageID: "msg_1"},
		{Content: TextBlock("x"), Meta: json.RawMessage(`{"a":1}`)},
		{Content: ContentBlock{Text: &TextContent{Text: "x", Meta: json.RawMessage(`{"b":2}`)}}},
		{Content: ContentBlock{Text: &TextContent{Text: "x", Annotations: &Annotations{Audience: []Role{RoleUser}}}}},
		{Content: ContentBlock{Image: &ImageContent{Data: "AA==", MimeType: "image/png"}}, MessageID: "m"},
	}
	for i, c := range chunks {
		for prefix, u := range map[string]SessionUpdate{
			prefixAgentMessageChunk: {AgentMessageChunk: c},
			prefixAgentThoughtChunk: {AgentThoughtChunk: c},
			prefixUserMessageChunk:  {UserMessageChunk: c},
		} {
			want, err := marshalTagged(prefix, c)
			require.NoError(t, err)
			got, err := u.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "chunk %d", i)
			assert.Equal(t, string(want), typesMarshal(t, u), "chunk %d via json.Marshal", i)
		}
	}
	_, err := json.Marshal(SessionUpdate{AgentMessageChunk: &ContentChunk{}})
	assert.ErrorContains(t, err, "no variant set", "a chunk needs content")
}

func BenchmarkMarshalAgentMessageChunk(b *testing.B) {
	n := SessionNotification{SessionID: "sess_01J9Z8K4W6Q3T2R7V5X0Y1B2C3", Update: AgentMessageChunk("Hello, world! This is a streamed token.")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(n); err != nil {
			b.Fatal(err)
		}
	}
}
