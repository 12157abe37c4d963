// Package agent runs ACP sessions against a model: Agent implements
// acp.Agent (initialize, authenticate, session creation) and Session runs
// prompt turns, streaming the model's text and reasoning to the client as
// session updates.
//
// Models are providers from the llm subpackages, chosen with a
// "PROVIDER/MODEL" spec (OpenModel): openai (any OpenAI-compatible Chat
// Completions server) and replay (a scripted offline model).
//
// Concurrency: an Agent is safe for concurrent use. A Session runs one
// prompt at a time (the ACP service guarantees it); its history is guarded
// so that a Session can be inspected while a turn runs. A turn hands every
// update to the session's UpdateSink before Prompt returns, and returns
// promptly when its context is cancelled: the model's HTTP request is
// aborted with it.
package agent
