package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// Limits of one tool result as the model gets it. A noisy test run or a
// large listing would otherwise cost tens of thousands of tokens at every
// later request of the session; the model gets the head and the tail, and
// the path of a file holding the whole text, which it can read in pages or
// grep.
const (
	MaxToolResultBytes = 32 << 10
	MaxToolResultLines = 400
	// What is kept of a longer result: its first lines (how it started)
	// and more of its last (where errors and summaries are).
	keepHeadLines, keepTailLines = 100, 280
	keepHeadBytes, keepTailBytes = 8 << 10, 22 << 10
)

// sizeForModel is what the model gets of a result's text: the text
// itself when it is within the limits (a Windowed result is not cut at a
// line count: it is a page already), else its head and tail around a note
// with the path of the file holding all of it (in the session's offload
// directory, which the tools can read).
func (s *Session) sizeForModel(callID string, r ToolResult) string {
	text := r.Text
	lines := strings.Count(text, "\n") + 1
	if len(text) <= MaxToolResultBytes && (r.Windowed || lines <= MaxToolResultLines) {
		return text
	}
	head := headOf(text, keepHeadLines, keepHeadBytes)
	tail := tailOf(text[len(head):], keepTailLines, keepTailBytes)
	omitted := text[len(head) : len(text)-len(tail)]
	where := "The whole output was not kept: narrow the request (a more specific pattern or path, a line range, | tail or | grep on a command) to see the rest."
	if dir := s.cfg.History.OffloadDir; dir != "" {
		if path, err := compact.NewOffloader(dir).Keep(callID, text); err != nil {
			s.log.Warn("keeping a long tool result", "error", err)
		} else {
			where = fmt.Sprintf("The whole output (%d lines, %d bytes) is in %s: read_file it with offset=%d for the part not shown, or grep it, instead of running the command again.",
				lines, len(text), path, strings.Count(head, "\n")+1)
		}
	}
	return fmt.Sprintf("%s\n[... %d lines (%d bytes) not shown. %s ...]\n%s", strings.TrimSuffix(head, "\n"),
		strings.Count(omitted, "\n"), len(omitted), where, tail)
}

// headOf is the start of text: whole lines, at most n of them and at
// most maxBytes bytes (the start of the first line, cut on a rune, when it
// alone is longer).
func headOf(text string, n, maxBytes int) string {
	end := 0
	for range n {
		i := strings.IndexByte(text[end:], '\n')
		next := len(text)
		if i >= 0 {
			next = end + i + 1
		}
		if next > maxBytes {
			break
		}
		end = next
		if i < 0 {
			break
		}
	}
	if end == 0 {
		end = min(maxBytes, len(text))
		for end > 0 && end < len(text) && !utf8.RuneStart(text[end]) {
			end--
		}
	}
	return text[:end]
}

// tailOf is the end of text: whole lines, at most n of them and at most
// maxBytes bytes (the end of the last line, cut on a rune, when it alone is
// longer).
func tailOf(text string, n, maxBytes int) string {
	start := len(text)
	for k := 0; k < n && start > 0; k++ {
		next := strings.LastIndexByte(text[:start-1], '\n') + 1
		if len(text)-next > maxBytes {
			break
		}
		start = next
	}
	if start == len(text) {
		start = max(len(text)-maxBytes, 0)
		for start < len(text) && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	return text[start:]
}

// The loop guard: a model that repeats a failing call unchanged is stuck.
// The third identical failure in a turn gets a note telling it to stop
// and rethink; the fifth ends the turn, so the user decides.
const (
	LoopGuardWarnAt = 3
	LoopGuardStopAt = 5
)

// guardCall counts a finished call: note is for the model's result, stop
// (when set) ends the turn with that message to the user. A call that
// succeeds clears its count.
func (s *Session) guardCall(call llm.ToolCall, failed bool, result string) (note, stop string) {
	key := call.Name + "\x00" + canonicalArgs(call.Arguments)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !failed {
		delete(s.guard, key)
		return "", ""
	}
	if s.guard == nil {
		s.guard = map[string]int{}
	}
	s.guard[key]++
	n := s.guard[key]
	switch {
	case n >= LoopGuardStopAt:
		last, _, _ := strings.Cut(strings.TrimPrefix(result, "Error: "), "\n")
		return "", fmt.Sprintf("I stopped here: my call to %s failed %d times in a row with the same arguments (last error: %s). "+
			"Tell me how you would like to proceed.", call.Name, n, llm.Truncate(last, 300))
	case n >= LoopGuardWarnAt:
		return fmt.Sprintf("\n\n[loop guard] This exact %s call (the same arguments) has now failed %d times in this turn; repeating it will fail the same way. "+
			"Stop and rethink: read the error, re-read the file or the code it is about, try a different approach, or ask the user.", call.Name, n), ""
	}
	return "", ""
}

// canonicalArgs is a call's arguments with their keys sorted, so the same
// call sent with another key order is the same call.
func canonicalArgs(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return strings.TrimSpace(args)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}
