package agent

import "strings"

// CodeBlock puts text in a Markdown code fence longer than any run of
// backticks inside it, so that a client rendering it as Markdown (ACP
// says clients should) shows it as it is: no `#` line made a heading, no
// `__init__.py` made bold, no HTML tag dropped, no image fetched, and no
// fence inside the text that ends the block early.
func CodeBlock(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + strings.TrimSuffix(text, "\n") + "\n" + fence
}

// shownLiterally reports whether the client is shown a tool's output of
// this kind as a code block: what files, searches, commands and fetched
// pages give is data, not prose of the agent's. The other kinds (plans,
// subagents' answers, questions, MCP tools) give text meant as Markdown.
func shownLiterally(kind ToolKind) bool {
	switch kind {
	case ToolKindRead, ToolKindSearch, ToolKindExecute, ToolKindFetch:
		return true
	}
	return false
}
