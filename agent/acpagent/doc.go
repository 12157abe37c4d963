// Package acpagent serves the Agent Client Protocol over the session core
// of package agent: Agent implements acp.Agent, acp.SessionStore and
// acp.Forker, and each session is an agent.Session wrapped for its
// connection. It is the only place that maps to ACP:
//
//   - agent.Update values become session/update notifications (acpmap.go),
//     and agent.PermissionRequest becomes session/request_permission;
//   - modes, the "model", "mode" and "thought_level" config options, slash
//     commands and the _acp-agent/* extension methods live here;
//   - the persistence glue (journal.go, store.go, loadrepair.go) implements
//     agent.Journal over package persistence, in the record format of
//     docs/jsonl-format.md, and reads sessions back (session/load, resume,
//     fork, list, delete);
//   - MCP servers named by the client are connected per session and their
//     tools registered in the session's tool registry.
//
// Concurrency: Agent is safe for concurrent use (its session map is under
// a mutex). acp.AgentService calls each session from its read loop (mode,
// config, cancel) and from request goroutines; an acpSession's own state
// (MCP connections) is under its mutex, and updates it sends go to the
// session's outbox through its acp.ClientConn, in order with the core's.
package acpagent
