package compact_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// A session runs this before every model call of a turn.
func Example_step() {
	sessionDir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(sessionDir)

	off := compact.NewOffloader(filepath.Join(sessionDir, "sess_1", "offloaded"))
	off.Threshold, off.ScanRatio = 20, 0.8 // for a tiny example
	comp := compact.NewCompactor(func(ctx context.Context, prompt []llm.Message) (string, error) {
		// A real session sends prompt[0] as the system prompt and
		// prompt[1:] as the messages, with no tools and
		// MaxTokens = comp.SummaryMaxTokens().
		return "The user asked for a.go; it was read.", nil
	}, off)
	var state compact.State // persisted with the session

	history := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("show me a.go")}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{llm.TextPart(strings.Repeat("package a\n", 200))}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("Here it is.")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("thanks")}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_2", Name: "ls", Arguments: `{}`}}}, // killed mid-tool
	}

	// 1. Repair the tool protocol.
	history, _ = compact.Sanitize(history)
	// 2. Offload, then compact if offload was not enough.
	state.Advance()
	tokens := compact.ContextSize(0, history) // no provider report yet
	res, err := off.OffloadIfNeeded(history, tokens)
	if err != nil {
		fmt.Println("offload:", err) // a warning: res is still usable
	}
	history = res.Messages
	fmt.Printf("offloaded %d, still over: %v\n", res.OffloadedCount, res.StillExceedsThreshold)

	comp.KeepLast = 2
	cres, attempted, err := comp.CompactIfNeeded(context.Background(), &state, res, false)
	if attempted && err == nil {
		history = cres.Messages
		// ... rewrite the session file, emit the compact event, then:
		deleted, _ := off.Cleanup(history)
		fmt.Printf("compacted %d messages, deleted %d files\n", cres.SummarizedCount, len(deleted))
	}
	for _, m := range history {
		fmt.Printf("%s: %.40q\n", m.Role, m.Text())
	}
	// Output:
	// offloaded 1, still over: true
	// compacted 3 messages, deleted 1 files
	// user: "[Compressed History]\n\nThe user asked for"
	// assistant: "Here it is."
	// user: "thanks"
}
