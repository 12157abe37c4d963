// Package acpagent serves the Agent Client Protocol (v1) over the
// protocol-neutral host of package host: Agent implements acp.Agent,
// acp.SessionStore, acp.SessionManager and acp.Forker, and each session
// is a host.Session wrapped for its connection. It maps and nothing more
// (TestTheAdapterImportsOnlyTheHost):
//
//   - agent.Update values become session/update notifications (acpmap.go),
//     agent.PermissionRequest becomes session/request_permission, and the
//     host's events (commands, mode, config options, subagents) their
//     updates (client.go: the host.Client of a connection);
//   - ACP's methods call the host's session lifecycle (agent.go,
//     sessions.go), whose errors wireError turns into ACP's codes
//     (errors.go); session/load replays host.Session.History;
//   - modes and the "mode", "model" and "thought_level" config options
//     are the host's options (options.go); prompts and slash commands,
//     and the _acp-agent/* extension methods (acpsession.go,
//     structuredext.go);
//   - the editor's fs/* and terminal/* become the tools' runtimes
//     (editor.go, clientruntime.go), and MCP servers' elicitations
//     elicitation/create.
//
// Concurrency: Agent is safe for concurrent use (its state is the
// host's). acp.AgentService calls each session from its read loop (mode,
// config, cancel) and from request goroutines; updates a session sends go
// to its outbox through its acp.ClientConn, in order with the core's.
package acpagent
