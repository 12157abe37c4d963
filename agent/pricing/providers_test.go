package pricing

// A provider's usage dialect is its registration's (llm.ProviderInfo.Usage):
// the tests price Anthropic usage, so they link the Anthropic provider as
// any program that has such usage does.
import _ "github.com/acp-agent/acp-agent/agent/llm/anthropic"
