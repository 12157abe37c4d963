// Package providers links the built-in model providers: importing it
// registers openai, anthropic and replay with package llm, where
// agent.OpenModel and everything else that asks about a provider finds
// them. A program that wants only some of them imports those instead.
//
// Adding a provider is a package under agent/llm that calls
// llm.RegisterProvider from init, and one import line here.
package providers

import (
	_ "github.com/acp-agent/acp-agent/agent/llm/anthropic"
	_ "github.com/acp-agent/acp-agent/agent/llm/openai"
	_ "github.com/acp-agent/acp-agent/agent/llm/replay"
)
