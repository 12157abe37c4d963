// Package llm defines the provider-neutral vocabulary of model calls: the
// messages and tools sent to a model and the events it streams back.
//
// Providers (subpackages openai, anthropic and replay) turn a Request into a sequence of
// Events: any number of text, reasoning, tool-call and usage events, then
// exactly one EventFinish on success. A stream that fails, including one
// that ends early (ErrTruncatedStream) or is cancelled through its context,
// reports an error instead of EventFinish. Types here are plain values with
// no concurrency of their own.
//
// # Providers
//
// A provider package registers itself from init (RegisterProvider) with a
// ProviderInfo: how to open its Model from the environment, the variables
// it reads, how its Usage counts cached tokens, whether its models read
// images and which reasoning levels they take. The session core, the host
// (agent/host: model choices) and pricing ask LookupProvider instead of
// switching on names; a
// Model that can list its server's models implements ModelLister.
// Package agent/llm/providers imports the built-in ones. The registry is
// safe for concurrent use.
//
// The HTTP providers share SSEPost, one streaming POST that follows no
// redirect (a 307 would re-send the API key and the conversation to the
// Location, possibly another origin): a 3xx fails with ErrRedirect,
// naming the target. A consumer collects a response with an Accumulator,
// which is linear in the response's size and enforces Limits (the caps
// on streamed tool-call arguments and text); past a cap it returns a
// *LimitError and the consumer stops the stream.
package llm
