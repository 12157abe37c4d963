package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
)

func assertJSONEqual(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want invalid JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		gi, _ := json.MarshalIndent(g, "", "  ")
		wi, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("body:\n%s\nwant:\n%s", gi, wi)
	}
}

func text(s string) []llm.Part { return []llm.Part{llm.TextPart(s)} }

func TestRequestShape(t *testing.T) {
	verifyNoLeaks(t)
	// The handler's goroutine hands what it saw over a mutex, not the network.
	var (
		mu        sync.Mutex
		gotPath   string
		gotHeader http.Header
		gotBody   []byte
	)
	p := newServer(t, Config{
		APIKey:               "sk-ant-shape",
		Headers:              map[string]string{"Anthropic-Beta": "interleaved-thinking-2025-05-14"},
		ThinkingBudgetTokens: 2048,
	}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotPath, gotHeader = r.Method+" "+r.URL.Path, r.Header.Clone()
		gotBody, _ = io.ReadAll(r.Body)
		mu.Unlock()
		serveSSE(fixture(t, "text.sse"), 0)(w, r)
	})
	req := &llm.Request{
		Model:     "claude-test",
		System:    "Be brief.",
		MaxTokens: 4096,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: text("Use tools.")},
			{Role: llm.RoleUser, Content: text("Read a.go")},
			{Role: llm.RoleUser, Content: []llm.Part{
				llm.TextPart("What is this?"),
				llm.TextPart(""),
				{Type: llm.PartImage, MIMEType: "image/png", Data: "iVBORw0KGgo="},
			}},
			{
				Role: llm.RoleAssistant, Reasoning: "Need the file.", ReasoningSignature: "sig-1",
				Content: text(""),
				ToolCalls: []llm.ToolCall{
					{ID: "toolu_a", Name: "read_file", Arguments: `{"path": "a.go"}`},
					{ID: "toolu_b", Name: "list_sessions", Arguments: ""},
					{ID: "functions.read:0", Name: "read_file", Arguments: `{"path": "c.go"`},
				},
			},
			{Role: llm.RoleTool, ToolCallID: "toolu_a", ToolName: "read_file", Content: text("package a")},
			{Role: llm.RoleTool, ToolCallID: "toolu_b", Content: text("")},
			{Role: llm.RoleUser, Content: text("Also check b.go")},
			{Role: llm.RoleTool, ToolCallID: "functions.read:0", Content: []llm.Part{
				llm.TextPart("Error: invalid arguments"),
				{Type: llm.PartImage, MIMEType: "image/jpeg", Data: "/9j/4AAQ"},
			}},
			{Role: llm.RoleAssistant, Reasoning: "Unsigned thoughts.", Content: text("Done.")},
			{Role: llm.RoleAssistant, Content: text("   ")},
			{Role: llm.RoleUser, Content: text("Thanks")},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list_sessions", Description: "List sessions."},
		},
	}
	if _, err := collect(t, p, context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotPath != "POST /v1/messages" {
		t.Errorf("request line = %q", gotPath)
	}
	for k, want := range map[string]string{
		"X-Api-Key":         "sk-ant-shape",
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Accept":            "text/event-stream",
		"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
		"Authorization":     "",
	} {
		if got := gotHeader.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}

	const want = `{
	  "model": "claude-test",
	  "max_tokens": 4096,
	  "system": [{"type": "text", "text": "Be brief.\n\nUse tools.", "cache_control": {"type": "ephemeral"}}],
	  "messages": [
	    {"role": "user", "content": [
	      {"type": "text", "text": "Read a.go"},
	      {"type": "text", "text": "What is this?"},
	      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
	    ]},
	    {"role": "assistant", "content": [
	      {"type": "thinking", "thinking": "Need the file.", "signature": "sig-1"},
	      {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.go"}},
	      {"type": "tool_use", "id": "toolu_b", "name": "list_sessions", "input": {}},
	      {"type": "tool_use", "id": "functions_read_0", "name": "read_file", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "toolu_a", "content": "package a"},
	      {"type": "tool_result", "tool_use_id": "toolu_b"},
	      {"type": "tool_result", "tool_use_id": "functions_read_0", "content": [
	        {"type": "text", "text": "Error: invalid arguments"},
	        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}}
	      ]},
	      {"type": "text", "text": "Also check b.go"}
	    ]},
	    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
	    {"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}]}
	  ],
	  "tools": [
	    {"name": "read_file", "description": "Read a file.",
	      "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
	    {"name": "list_sessions", "description": "List sessions.",
	      "input_schema": {"type": "object", "properties": {}}, "cache_control": {"type": "ephemeral"}}
	  ],
	  "stream": true,
	  "thinking": {"type": "enabled", "budget_tokens": 2048}
	}`
	assertJSONEqual(t, gotBody, []byte(want))
}

// TestAlternation covers the conversion rules one at a time.
func TestAlternation(t *testing.T) {
	tests := []struct {
		name string
		msgs []llm.Message
		want string // the "messages" array
	}{
		{
			name: "assistant first gets a user turn in front",
			msgs: []llm.Message{
				{Role: llm.RoleAssistant, Content: text("Welcome back.")},
				{Role: llm.RoleUser, Content: text("Hi")},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]},
			  {"role": "assistant", "content": [{"type": "text", "text": "Welcome back."}]},
			  {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
			]`,
		},
		{
			name: "a leading system message does not count as the first turn",
			msgs: []llm.Message{
				{Role: llm.RoleSystem, Content: text("Summary of earlier work.")},
				{Role: llm.RoleAssistant, Content: text("Continuing.")},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]},
			  {"role": "assistant", "content": [{"type": "text", "text": "Continuing."}]}
			]`,
		},
		{
			name: "an empty first user message leaves the assistant first",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: text(" \n")},
				{Role: llm.RoleAssistant, Content: text("Hello.")},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]},
			  {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}
			]`,
		},
		{
			name: "consecutive assistant messages merge",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: text("Go")},
				{Role: llm.RoleAssistant, Content: text("Step one.")},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "pwd"}}},
				{Role: llm.RoleTool, ToolCallID: "t1", Content: text("/work")},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "Go"}]},
			  {"role": "assistant", "content": [
			    {"type": "text", "text": "Step one."},
			    {"type": "tool_use", "id": "t1", "name": "pwd", "input": {}}
			  ]},
			  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "/work"}]}
			]`,
		},
		{
			name: "user text written while tools ran goes after the results",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: text("Go")},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "a"}, {ID: "t2", Name: "b"}}},
				{Role: llm.RoleUser, Content: text("Hurry")},
				{Role: llm.RoleTool, ToolCallID: "t1", Content: text("1")},
				{Role: llm.RoleTool, ToolCallID: "t2", Content: text("2")},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "Go"}]},
			  {"role": "assistant", "content": [
			    {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
			    {"type": "tool_use", "id": "t2", "name": "b", "input": {}}
			  ]},
			  {"role": "user", "content": [
			    {"type": "tool_result", "tool_use_id": "t1", "content": "1"},
			    {"type": "tool_result", "tool_use_id": "t2", "content": "2"},
			    {"type": "text", "text": "Hurry"}
			  ]}
			]`,
		},
		{
			name: "an empty assistant message between user messages merges them",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: text("One")},
				{Role: llm.RoleAssistant, Reasoning: "unsigned, so dropped"},
				{Role: llm.RoleUser, Content: text("Two")},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "One"}, {"type": "text", "text": "Two"}]}
			]`,
		},
		{
			name: "thinking with a signature is echoed first, even if its text is empty",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: text("Q")},
				{
					Role: llm.RoleAssistant, Content: text("A"), ReasoningSignature: "sig",
					RedactedReasoning: []string{"enc-1", "", "enc-2"},
				},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "Q"}]},
			  {"role": "assistant", "content": [
			    {"type": "thinking", "thinking": "", "signature": "sig"},
			    {"type": "redacted_thinking", "data": "enc-1"},
			    {"type": "redacted_thinking", "data": "enc-2"},
			    {"type": "text", "text": "A"}
			  ]}
			]`,
		},
		{
			name: "tool inputs that are not JSON objects become {}",
			msgs: []llm.Message{
				{Role: llm.RoleUser, Content: text("Q")},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
					{ID: "t1", Name: "a", Arguments: "  "},
					{ID: "t2", Name: "a", Arguments: "[1,2]"},
					{ID: "t3", Name: "a", Arguments: `{"x":`},
					{ID: "t4", Name: "a", Arguments: " {\n \"x\": 1 }\n"},
				}},
			},
			want: `[
			  {"role": "user", "content": [{"type": "text", "text": "Q"}]},
			  {"role": "assistant", "content": [
			    {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
			    {"type": "tool_use", "id": "t2", "name": "a", "input": {}},
			    {"type": "tool_use", "id": "t3", "name": "a", "input": {}},
			    {"type": "tool_use", "id": "t4", "name": "a", "input": {"x": 1}}
			  ]}
			]`,
		},
		{
			name: "no messages",
			want: `[]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeMessages(tt.msgs)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			assertJSONEqual(t, data, []byte(tt.want))
			assertAlternates(t, got)
		})
	}
}

// assertAlternates checks Anthropic's rules on a converted conversation.
func assertAlternates(t *testing.T, msgs []message) {
	t.Helper()
	for i, m := range msgs {
		wantRole := "user"
		if i%2 == 1 {
			wantRole = "assistant"
		}
		if m.Role != wantRole {
			t.Errorf("message %d has role %s, want %s", i, m.Role, wantRole)
		}
		if len(m.Content) == 0 {
			t.Errorf("message %d is empty", i)
		}
		seenOther := false
		for _, b := range m.Content {
			if b.Type == "text" && strings.TrimSpace(b.Text) == "" {
				t.Errorf("message %d has a blank text block", i)
			}
			if b.Type == "tool_result" && seenOther {
				t.Errorf("message %d has a tool_result after other blocks", i)
			}
			seenOther = seenOther || b.Type != "tool_result"
		}
	}
}

func TestRequestOmitsOptionalFields(t *testing.T) {
	data, err := New(Config{}).requestBody(&llm.Request{
		Model: "m", System: "  ", Messages: simpleRequest.Messages,
	})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"system", "tools", "thinking"} {
		if _, ok := body[k]; ok {
			t.Errorf("body has %q: %s", k, data)
		}
	}
	if body["max_tokens"] != float64(DefaultMaxTokens) || body["stream"] != true {
		t.Errorf("body = %s, want max_tokens %d and stream true", data, DefaultMaxTokens)
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name         string
		cfg          Config
		reqMax       int
		wantMax      float64
		wantThinking bool
	}{
		{"default", Config{}, 0, DefaultMaxTokens, false},
		{"config", Config{MaxTokens: 1000}, 0, 1000, false},
		{"request wins", Config{MaxTokens: 1000}, 300, 300, false},
		{"thinking below max", Config{ThinkingBudgetTokens: 4000}, 0, DefaultMaxTokens, true},
		{"thinking at or above max raises max", Config{MaxTokens: 4000, ThinkingBudgetTokens: 4000}, 0, 8000, true},
		{"negative budget is off", Config{ThinkingBudgetTokens: -1}, 0, DefaultMaxTokens, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := *simpleRequest
			req.MaxTokens = tt.reqMax
			data, err := New(tt.cfg).requestBody(&req)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			json.Unmarshal(data, &body)
			if body["max_tokens"] != tt.wantMax {
				t.Errorf("max_tokens = %v, want %v", body["max_tokens"], tt.wantMax)
			}
			if _, ok := body["thinking"]; ok != tt.wantThinking {
				t.Errorf("thinking present = %v, want %v: %s", ok, tt.wantThinking, data)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"nil request", nil, "nil request"},
		{"invalid tool schema", &llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "bad", Parameters: json.RawMessage(`{"type":`)}}}, `tool "bad"`},
		{"unknown role", &llm.Request{Model: "m", Messages: []llm.Message{{Role: "narrator", Content: text("x")}}}, `unknown role "narrator"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			for _, err := range New(Config{}).Stream(context.Background(), tt.req) {
				n++
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want one containing %q", err, tt.want)
				}
			}
			if n != 1 {
				t.Errorf("got %d items, want one error", n)
			}
		})
	}
}

func TestSanitizeID(t *testing.T) {
	for in, want := range map[string]string{
		"toolu_01A-b": "toolu_01A-b",
		"call:1.x":    "call_1_x",
		"":            "",
		"é":           "__",
	} {
		if got := sanitizeID(in); got != want {
			t.Errorf("sanitizeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReasoningEffortSetsTheThinkingBudget(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		effort     string
		wantBudget float64 // 0: no thinking
	}{
		{"no effort keeps the configured budget", Config{ThinkingBudgetTokens: 3000}, "", 3000},
		{"no effort and no budget: no thinking", Config{}, "", 0},
		{"off disables a configured budget", Config{ThinkingBudgetTokens: 3000}, llm.EffortOff, 0},
		{"low", Config{}, llm.EffortLow, 2048},
		{"medium", Config{}, llm.EffortMedium, 8192},
		{"high overrides the configured budget", Config{ThinkingBudgetTokens: 3000}, llm.EffortHigh, 24576},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := *simpleRequest
			req.ReasoningEffort = tt.effort
			data, err := New(tt.cfg).requestBody(&req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				MaxTokens float64 `json:"max_tokens"`
				Thinking  *struct {
					Type   string  `json:"type"`
					Budget float64 `json:"budget_tokens"`
				} `json:"thinking"`
			}
			if err := json.Unmarshal(data, &body); err != nil {
				t.Fatal(err)
			}
			if tt.wantBudget == 0 {
				if body.Thinking != nil {
					t.Fatalf("thinking sent: %s", data)
				}
				return
			}
			if body.Thinking == nil || body.Thinking.Type != "enabled" || body.Thinking.Budget != tt.wantBudget {
				t.Fatalf("thinking = %+v, want enabled with %v: %s", body.Thinking, tt.wantBudget, data)
			}
			if body.MaxTokens <= tt.wantBudget {
				t.Fatalf("max_tokens %v must exceed the budget %v", body.MaxTokens, tt.wantBudget)
			}
		})
	}
}
