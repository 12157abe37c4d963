// Package mcpclient connects the agent to the MCP servers an ACP client lists
// in session/new (and session/load), and exposes their tools under
// provider-safe names.
//
// It is a thin layer over the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk/mcp); what it adds is what the
// agent needs around it: concurrent connecting with a per-server timeout,
// a single tool table across servers, result flattening for the model and
// conversion to ACP content for the client, and process hygiene for stdio
// servers.
//
// # Usage
//
//	m, failures := mcpclient.Connect(ctx, req.MCPServers, mcpclient.Options{
//		ClientName: "acp-agent", ClientVersion: version, Logger: log,
//		OnToolsChanged: func() { /* re-read m.Tools() before the next model call */ },
//	})
//	defer m.Close()
//	for _, f := range failures { /* tell the user; the session goes on */ }
//	for _, t := range m.Tools() { /* offer t.QualifiedName, t.Description, t.InputSchema */ }
//	res, err := m.Call(ctx, t.QualifiedName, args)
//
// # Transports
//
//   - stdio ([acp.McpServerStdio]): the command is started with its args and
//     an environment made of a minimal subset of ours (HOME, LOGNAME, PATH,
//     SHELL, TERM, USER, LANG, LC_ALL, LC_CTYPE, TMPDIR, TZ) plus the
//     variables the client gave, which win on conflict. Anything else, such as
//     API keys or proxies in the agent's environment, is not passed on: the
//     client must list it. The child's stdout is the MCP channel; its stderr
//     is read line by line and each line is logged to [Options.Logger]
//     ("mcp server stderr"). Nothing of the child ever reaches our stdout,
//     which is the ACP channel. On Unix the child runs in its own process
//     group, so a terminal's Ctrl-C does not reach it and Close can clean up
//     whatever it spawned.
//   - http ([acp.McpServerHttp]): MCP streamable HTTP.
//   - sse ([acp.McpServerSse]): the deprecated HTTP+SSE transport.
//
// For http and sse, every request the SDK makes for a server is bound to
// that server's lifetime, so an unresponsive server can hold neither
// connecting past its timeout nor Close for more than a second. The
// client's headers are added by an [http.RoundTripper]
// to every request to the server's own origin (scheme, host and port),
// except headers the SDK sets itself (Accept, Content-Type, Mcp-Session-Id,
// ...), which keep the SDK's value. A redirect within that origin is
// followed; a redirect to another origin is refused
// ([ErrCrossOriginRedirect], naming the target), since the request would
// still carry the SDK's session id and, for 307/308, its body. No
// connection goes to a link-local or cloud metadata address
// (policy.CheckDialAddress: an address in the URL before anything is
// sent, every address the Manager's own transport dials, so names
// resolving there too); loopback and private addresses are allowed.
// Servers of any other type fail with an "unsupported transport"
// [Failure].
//
// The client advertises no optional capabilities (no roots, sampling or
// elicitation): the agent serves none of them.
//
// # Qualified names
//
// A tool's [Tool.QualifiedName] is built as follows:
//
//  1. base = "mcp__" + sanitize(server) + "__" + sanitize(tool), where
//     sanitize replaces every character outside [a-zA-Z0-9_-] by '_'.
//  2. If base is longer than 64 characters, or several tools (of the same or
//     different servers) have the same base, each of them is named
//     base[:55] + "_" + the first 8 hex digits of SHA-256(server "\x00" tool).
//     No tool keeps the plain base, so the result does not depend on the
//     order in which servers answered.
//  3. In the (astronomically unlikely) case that a name is still taken, "\x00"
//     and a counter are appended to the hashed input until it is free, in
//     order of (server, tool).
//
// Servers configured twice under one name are told apart first: the n-th
// repeat is named as if it were "<name>_n" (n = 1, 2, ..., in configured
// order). Names are therefore unique, match ^[a-zA-Z0-9_-]{1,64}$ (as OpenAI,
// Anthropic and Gemini require) and are stable across re-listings as long as
// the set of colliding names does not change.
//
// # Lifecycle and concurrency
//
// [Connect] connects to all servers concurrently and returns when each has
// either connected and listed its tools or failed; ctx and
// [Options.ConnectTimeout] bound only this phase, never the sessions. A
// failing server never fails the others. A Manager is returned even when
// every server failed, and [Manager.Close] must always be called.
//
// All Manager methods are safe for concurrent use. [Manager.Call]s run in
// parallel, also on the same server. The tool table is replaced atomically:
// [Manager.Tools] returns a consistent snapshot, and a Call with a name from
// an older snapshot still works if the tool still exists under that name.
//
// Per connected server the Manager runs two goroutines: one waits for the
// session to end (a crashed server is marked disconnected, its tools are
// removed and OnToolsChanged is called), the other re-lists tools after a
// notifications/tools/list_changed (re-listing cannot happen in the SDK's
// notification handler, which runs on the connection's read loop). One more
// goroutine delivers [Options.OnToolsChanged] calls: they are serialized,
// never concurrent, coalesced when several changes come quickly, and happen
// only when a tool list really changed. OnToolsChanged must not call Close,
// which waits for that goroutine.
//
// Close closes every session concurrently. For stdio servers this closes the
// child's stdin, waits up to 2 s for it to exit, then sends SIGTERM, waits
// 2 s, then SIGKILL (the SDK's ladder, as the MCP spec describes it), reaps
// the child, and finally SIGKILLs anything left in its process group. An
// http or sse session gets 1 s to end (the streamable transport's DELETE),
// then its requests are aborted. Close returns after every goroutine the
// Manager started has ended; pending Calls fail. Close is idempotent.
package mcpclient
