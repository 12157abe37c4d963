// Package markdown provides the few Markdown forms the agent writes for
// clients that render text as Markdown (ACP says they should): a code
// block for tool output (CodeBlock), a code span for a title's operands
// (Code), and the way back for clients that show text on a terminal
// (CodeBlockText). Each shows its text exactly, whatever it holds.
//
// The functions are pure and safe for concurrent use.
package markdown
