// Package acpv2agent serves ACP v2 (Preview) over the protocol-neutral
// host of package host, beside agent/acpagent's v1 on the same host: an
// acp.Server with Options.V2 set to an Agent gives every client the
// version it asks for, and a session is the same session (the same file)
// whichever version opens it. Agent implements acp.AgentV2 and its
// optional interfaces (login and logout, delete, fork, title, status,
// archive); each session is a host.Session wrapped for its connection.
// It maps and nothing more (TestTheV2AdapterImportsOnlyTheHost):
//
//   - agent.Update values become v2 updates (mapping.go): chunks with
//     their message ids, tool calls as tool_call_update upserts (diffs
//     with a git patch), the plan as plan_update, usage, the title,
//     compaction and notices; the foreground state is state_update
//     (client.go): running when a turn starts, requires_action while a
//     permission request waits, idle with the stop reason when it ends;
//   - session/prompt inserts the user message when the session is idle
//     and is answered with its id; a prompt sent while a turn runs is held
//     and inserted after it (session.go); session/resume replays the
//     conversation (host.Session.History) as upserts;
//   - the "mode", "model" and "thought_level" options are config options
//     (v2 has no modes); slash commands are the host's; MCP servers'
//     questions are elicitation/create (client.go).
//
// v2 clients offer no files or terminals: every tool runs in the agent's
// confined local workspace, and the commands it runs are shown as
// display-only terminals (terminals.go), which terminal/cancel stops;
// tool_call/cancel stops one running tool call. The extension methods
// are v1's (extensions.go). Message ids are stored with the messages, so
// a replay sends each with the id it had live.
//
// Concurrency: Agent is safe for concurrent use (its state is the
// host's). A session's Prompt, Cancel and SetConfigOption are called on
// the connection's read loop and never block; its updates are sent by
// the session's worker through its acp.ClientConnV2, in order, and the
// prompts it holds are inserted from that worker when a turn ends.
package acpv2agent
