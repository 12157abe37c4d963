// Package testkit is what the tests of the session core (package agent)
// and of the ACP adapter (agent/acpagent) share: a scripted model with
// gates to hold a call at a known point, an OpenAI-compatible streaming
// test server and an Anthropic event writer, and helpers to run prompts
// and read the output stream with bounded waits, and golden files of
// JSON values (JSONGolden). It is internal: only tests import it (agent,
// agent/acpagent, agent/tools).
//
// Concurrency: FakeModel, OpenAIServer, Bodies and RecordingTool are
// safe for concurrent use; a Gate is closed once from each side.
package testkit
