// Package acpv2 holds the wire types of ACP v2 (Preview), as the official
// SDK 2.4.0 schema defines them (testdata/acp-schema/npm-sdk-2.4.0/v2:
// schema.json, and schema.unstable.json, which adds the unstable
// methods, members and variants). Package acp serves v2 beside v1 with
// these types; this package knows no connection and imports nothing of
// the module.
//
// # Types
//
// Every definition of the unstable schema has a Go type of the same
// name, generated into types_gen.go (package internal/gen; the few that
// need hand-written code are in special.go), except the JSON-RPC
// envelopes and the proxy role's, which an agent has no use for. Members
// are Go-named (sessionId → SessionID); docs mark what is unstable.
// Tests check every type against its definition: samples made from the
// schema decode and encode back unchanged and validate.
//
// Encoding: every object keeps its _meta (json.RawMessage). Absent
// optionals are omitted; required arrays and maps are never null. In the
// upserts (tool_call_update, terminal_update, agent_message, ...) an
// optional member is a Nullable: absent leaves the client's value, null
// clears it. Tagged unions are structs with one pointer per variant and
// Other, which keeps a variant this package does not know (a newer
// schema's, or a custom one: custom values start with "_") and sends it
// back as it came. Enums are string types with constants; any other
// value an agent sends must start with "_".
//
// # Requests
//
// Decode reads the params of a method the agent serves: required members
// present, types, and Validate where the schema says more (absolute
// paths, a non-empty prompt, a known replay cursor, unique MCP server
// names).
//
// Values are plain data: safe to share read-only between goroutines.
package acpv2
