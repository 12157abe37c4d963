package agent

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
