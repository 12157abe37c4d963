// Package llm defines the provider-neutral vocabulary of model calls: the
// messages and tools sent to a model and the events it streams back.
//
// Providers (subpackages openai, anthropic and replay) turn a Request into a sequence of
// Events: any number of text, reasoning, tool-call and usage events, then
// exactly one EventFinish on success. A stream that fails, including one
// that ends early (ErrTruncatedStream) or is cancelled through its context,
// reports an error instead of EventFinish. Types here are plain values with
// no concurrency of their own.
package llm
