package acpagent_test

import "github.com/acp-agent/acp-agent/agent/internal/testkit"

// The shared test kit (agent/internal/testkit: a scripted model, provider
// test servers, prompt and stream helpers) under the names these tests
// use.
type (
	gate            = testkit.Gate
	reply           = testkit.Reply
	fakeModel       = testkit.FakeModel
	promptResult    = testkit.PromptResult
	recordingTool   = testkit.RecordingTool
	openAIServer    = testkit.OpenAIServer
	recordedRequest = testkit.RecordedRequest
	bodies          = testkit.Bodies
)

var (
	newFakeModel    = testkit.NewFakeModel
	says            = testkit.Says
	calls           = testkit.Calls
	call            = testkit.Call
	newSession      = testkit.NewSession
	fork            = testkit.Fork
	goPrompt        = testkit.GoPrompt
	await           = testkit.Await
	notYet          = testkit.NotYet
	waitPending     = testkit.WaitPending
	nextEvent       = testkit.NextEvent
	waitResults     = testkit.WaitResults
	drain           = testkit.Drain
	userTexts       = testkit.UserTexts
	messageSummary  = testkit.MessageSummary
	toolNames       = testkit.ToolNames
	lastUserText    = testkit.LastUserText
	newOpenAIServer = testkit.NewOpenAIServer
	sse             = testkit.SSE
	textChunk       = testkit.TextChunk
	reasoningChunk  = testkit.ReasoningChunk
	finishChunk     = testkit.FinishChunk
	anthropicEvents = testkit.AnthropicEvents
	failWith        = testkit.FailWith
)

const (
	waitTimeout = testkit.WaitTimeout
	testKey     = testkit.TestKey
	usageChunk  = testkit.UsageChunk
)
