package structured

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/agent/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// golden compares got with testdata/name exactly; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	assert.Equal(t, string(want), got, "golden %s", name)
}

// seedOutput is the output of the seed's to_text tests.
func seedOutput() *Node {
	return Object(
		Prop("thinking", String("describe how will you plan to reply?")),
		Prop("reply", String("your final reply")),
	)
}

func seedPrompt() *Prompt {
	return &Prompt{Input: "Hello", Instruct: "reply something", Info: "I'm a human", Output: seedOutput()}
}

// The exact strings of the seed's to_text tests (Agently
// test_agently_prompt_generator.py); the golden files must keep matching
// them, whatever -update writes.
const (
	seedToText = "user:\n[INFO]:\nI'm a human\n\n[INSTRUCT]:\nreply something\n\n[INPUT]:\nHello\n\n" +
		"[OUTPUT REQUIREMENT]:\nData Format: JSON\nData Structure:\n{\n" +
		"  \"thinking\": <str>, // describe how will you plan to reply?\n" +
		"  \"reply\": <str> // your final reply\n}\n\n[OUTPUT]:\nassistant:"
	seedToTextComplex = "user:\n[CHAT HISTORY]:\n[user]:ni hao\n\n[INFO]:\nI'm a human\n\n[INSTRUCT]:\nreply something\n\n" +
		"[INPUT]:\nHello\n\n[OUTPUT REQUIREMENT]:\nData Format: JSON\nData Structure:\n{\n" +
		"  \"thinking\": <str>, // describe how will you plan to reply?\n" +
		"  \"reply\": <str> // your final reply\n}\n\n[OUTPUT]:\nassistant:"
	seedToTextRootList = "user:\n[INPUT]:\nHello\n\n[OUTPUT REQUIREMENT]:\nData Format: JSON\nData Structure:\n[\n" +
		"  {\n    \"title\": <str>, // news title\n    \"url\": <str> // news url\n  },\n  ...\n]\n\n[OUTPUT]:\nassistant:"
	seedToTextEnum = "user:\n[OUTPUT REQUIREMENT]:\nData Format: JSON\nData Structure:\n{\n" +
		"  \"status\": <Literal[open, closed]>, // ticket status\n" +
		"  \"priority\": <Literal[1, 2]> // ticket priority\n}\n\n[OUTPUT]:\nassistant:"
	seedMainText = "[INFO]:\nI'm a human\n\n[INSTRUCT]:\nreply something\n\n[INPUT]:\nHello\n\n" +
		"[OUTPUT REQUIREMENT]:\nData Format: JSON\nData Structure:\n{\n" +
		"  \"thinking\": <str>, // describe how will you plan to reply?\n" +
		"  \"reply\": <str> // your final reply\n}\n\n[OUTPUT]:"
)

// Seed 004 §6 to_prompt_object: a prompt with only input answers in
// markdown.
func TestSeed004_OnlyInputGivesMarkdown(t *testing.T) {
	p := &Prompt{Input: "OK"}
	assert.Equal(t, "markdown", p.Format())
	assert.Empty(t, p.History)
}

// Seed 004 §6: setting output switches an unchosen format to json, and a
// format the user then sets is kept.
func TestSeed004_OutputMakesJSONUnlessUserChose(t *testing.T) {
	p := &Prompt{Input: "OK"}
	p.Output = Object(Prop("reply", String("your reply")))
	assert.Equal(t, "json", p.Format())
	p.OutputFormat = "yaml"
	assert.Equal(t, "yaml", p.Format())
	assert.Equal(t, Object(Prop("reply", String("your reply"))), p.Output)
}

// Seed 004 §6: a format set before the output is not "infected" by it.
func TestSeed004_LaterOutputKeepsUserFormat(t *testing.T) {
	p := &Prompt{OutputFormat: "some random words"}
	p.Output = List(String("something"))
	assert.Equal(t, "some random words", p.Format())
}

// Seed 004 §6 to_text: the exact multi-line layout, with blank lines and
// "// desc" comments.
func TestSeed004_ToTextLayout(t *testing.T) {
	got, err := seedPrompt().ToText()
	require.NoError(t, err)
	assert.Equal(t, seedToText, got)
	golden(t, "to_text.golden", got)
}

// Seed 004 §6 to_text with a list at the root of the output.
func TestSeed004_ToTextRootListOutput(t *testing.T) {
	p := &Prompt{Input: "Hello", Output: List(Object(
		Prop("title", String("news title")),
		Prop("url", String("news url")),
	))}
	got, err := p.ToText()
	require.NoError(t, err)
	assert.Equal(t, seedToTextRootList, got)
	golden(t, "to_text_root_list.golden", got)
}

// Seed 004 §6 to_text with enumerated leaves.
func TestSeed004_ToTextEnumOutput(t *testing.T) {
	p := &Prompt{Output: Object(
		Prop("status", OneOf("ticket status", "open", "closed")),
		Prop("priority", OneOf("ticket priority", 1, 2)),
	)}
	got, err := p.ToText()
	require.NoError(t, err)
	assert.Equal(t, seedToTextEnum, got)
	golden(t, "to_text_enum.golden", got)

	om, err := p.OutputModel()
	require.NoError(t, err)
	v, err := om.Parse(`{"status": "open", "priority": "2"}`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"status": "open", "priority": 2.0}, v)
	_, err = om.Parse(`{"status": "pending"}`)
	assert.ErrorIs(t, err, ErrSchemaMismatch)
}

// logRecorder collects slog records.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecorder) WithGroup(string) slog.Handler      { return h }

func historyWithImage() []llm.Message {
	return []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{
		llm.TextPart("ni hao"),
		{Type: llm.PartImage, MIMEType: "image/png", Data: "AAAA"},
	}}}
}

// Seed 004 §6 to_text: non-text chat history content is skipped with a
// warning and does not appear in the text.
func TestSeed004_ToTextSkipsNonTextHistoryWithWarning(t *testing.T) {
	rec := &logRecorder{}
	p := seedPrompt()
	p.History = historyWithImage()
	p.Logger = slog.New(rec)
	got, err := p.ToText()
	require.NoError(t, err)
	assert.Equal(t, seedToTextComplex, got)
	assert.NotContains(t, got, "AAAA")
	golden(t, "to_text_complex.golden", got)
	require.Len(t, rec.records, 1)
	assert.Equal(t, slog.LevelWarn, rec.records[0].Level)
	assert.Contains(t, rec.records[0].Message, "skipped non-text")

	// Without a logger the warning is dropped, not printed.
	p.Logger = nil
	got2, err := p.ToText()
	require.NoError(t, err)
	assert.Equal(t, got, got2)
}

func seedMessagePrompt() *Prompt {
	p := seedPrompt()
	p.History = append(historyWithImage(), llm.Message{
		Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("hello, what can I help you?")},
	})
	return p
}

// Seed 004 §6 to_messages(rich_content=False): history parts become plain
// text (text parts only, joined by "\n\n") and the main prompt is the last
// user message.
func TestSeed004_ToMessagesPlain(t *testing.T) {
	rec := &logRecorder{}
	p := seedMessagePrompt()
	p.History[0].Content = append(p.History[0].Content, llm.TextPart("second"))
	p.Logger = slog.New(rec)
	got := p.ToMessages(false)
	assert.Equal(t, []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("ni hao\n\nsecond")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("hello, what can I help you?")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(seedMainText)}},
	}, got)
	assert.Len(t, rec.records, 1, "the image part is skipped with a warning")
	// The prompt's history is not modified.
	assert.Len(t, p.History[0].Content, 3)
}

// Seed 004 §6 to_messages(rich_content=True): history keeps its parts,
// non-text ones included; assistant text is a text part.
func TestSeed004_ToMessagesRich(t *testing.T) {
	p := seedMessagePrompt()
	got := p.ToMessages(true)
	assert.Equal(t, []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{
			llm.TextPart("ni hao"),
			{Type: llm.PartImage, MIMEType: "image/png", Data: "AAAA"},
		}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("hello, what can I help you?")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(seedMainText)}},
	}, got)
}

// Seed 004 §6 strict_role_orders: a user "[CHAT HISTORY]" first when the
// history does not start with the user, an assistant "[User continue
// input]" last when it does not end with the assistant.
func TestSeed004_StrictRoleOrders(t *testing.T) {
	p := &Prompt{Input: "hi", StrictRoles: true, History: []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Hi, how can I help you today?")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("?")}},
	}}
	want := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("[CHAT HISTORY]")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Hi, how can I help you today?")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("?")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("[User continue input]")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("hi")}},
	}
	assert.Equal(t, want, p.ToMessages(true))
	assert.Equal(t, want, p.ToMessages(false))
	assert.Len(t, p.History, 2)
}

func TestStrictRoleOrdersMerges(t *testing.T) {
	in := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("a")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("b")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("c")}, ToolCalls: []llm.ToolCall{{ID: "1"}}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "2"}}},
		{Role: llm.RoleTool, ToolCallID: "1", Content: []llm.Part{llm.TextPart("r1")}},
		{Role: llm.RoleTool, ToolCallID: "2", Content: []llm.Part{llm.TextPart("r2")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("done")}},
	}
	got := StrictRoleOrders(in)
	require.Len(t, got, 5)
	assert.Equal(t, []llm.Part{llm.TextPart("a"), llm.TextPart("b")}, got[0].Content)
	assert.Equal(t, []llm.ToolCall{{ID: "1"}, {ID: "2"}}, got[1].ToolCalls)
	assert.Equal(t, "1", got[2].ToolCallID)
	assert.Equal(t, "2", got[3].ToolCallID)
	assert.Equal(t, "done", got[4].Text())
	// The input is untouched.
	assert.Len(t, in[0].Content, 1)
	assert.Len(t, in[2].ToolCalls, 1)
	assert.Nil(t, StrictRoleOrders(nil))

	// Plain mode joins merged text parts with a blank line.
	p := &Prompt{StrictRoles: true, History: in[:2], Input: "x"}
	msgs := p.ToMessages(false)
	assert.Equal(t, "a\n\nb", msgs[0].Text())
	assert.Equal(t, ContinuePlaceholder, msgs[1].Text())
}

func TestEmptyPrompt(t *testing.T) {
	p := &Prompt{}
	_, err := p.ToText()
	assert.ErrorIs(t, err, ErrEmptyPrompt)
	hist := []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("x")}}}
	p.History = hist
	assert.Equal(t, hist, p.ToMessages(true), "no main message for an empty prompt")
}

// Other layouts, pinned by golden files: structured info, sections,
// nested objects and lists with descriptions, markdown and custom formats.
func TestToTextLayouts(t *testing.T) {
	nested := Object(
		Req("summary", String("one sentence")),
		Prop("items", List(Object(
			Req("name", String("")),
			Prop("price", Integer("in cents")),
			Prop("tags", List(String("a tag")).WithDesc("labels")),
		)).WithDesc("what was found")),
		Prop("meta", Object(Prop("source", Leaf("url", "where it came from"))).WithDesc("provenance")),
		Prop("ok", Boolean("")),
	)
	tests := []struct {
		name string
		p    *Prompt
	}{
		{"to_text_info_map.golden", &Prompt{
			Info:     map[string]any{"user": "Ann", "age": 30, "langs": []string{"go", "py"}},
			Instruct: []string{"be brief", "be kind"},
			Input:    map[string]any{"question": "why?", "n": 2},
		}},
		{"to_text_info_list.golden", &Prompt{Info: []string{"fact one", "fact two"}, Input: "go"}},
		{"to_text_sections_nested.golden", &Prompt{
			Info:     "context",
			Sections: []Section{{Title: "action_results", Content: []ActionResult{{Tool: "add", Args: map[string]any{"a": 1, "b": 2}, Result: 3}}}},
			Input:    "sum it",
			Output:   nested,
		}},
		{"to_text_markdown_output.golden", &Prompt{Input: "write a poem", Output: String("the poem"), OutputFormat: "markdown"}},
		{"to_text_yaml_output.golden", &Prompt{Input: "list", Output: nested, OutputFormat: "yaml"}},
		{"to_text_text_output.golden", &Prompt{Input: "list", Output: nested, OutputFormat: "text"}},
		{"to_text_only_input.golden", &Prompt{Input: "just this"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.ToText()
			require.NoError(t, err)
			golden(t, tt.name, got)
		})
	}
}

func TestOnlyInputMessageIsTheInput(t *testing.T) {
	p := &Prompt{Input: "just this"}
	assert.Equal(t, []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("just this")}}}, p.ToMessages(false))
	p.Instruct = "x"
	assert.Equal(t, "[INSTRUCT]:\nx\n\n[INPUT]:\njust this\n\n[OUTPUT]:", p.ToMessages(false)[0].Text())
}

func TestCloneIsIndependent(t *testing.T) {
	p := seedMessagePrompt()
	p.Sections = []Section{{Title: "a", Content: "b"}}
	c := p.Clone()
	c.Sections = append(c.Sections, Section{Title: "c"})
	c.Sections[0].Title = "changed"
	c.History[0].Role = llm.RoleSystem
	assert.Equal(t, "a", p.Sections[0].Title)
	assert.Len(t, p.Sections, 1)
	assert.Equal(t, llm.RoleUser, p.History[0].Role)
}
