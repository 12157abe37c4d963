package pricing_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

func Example() {
	m, ok := pricing.Default().Lookup("openai", "gpt-4.1-2025-04-14")
	if !ok {
		return // unknown model: no cost, unknown context window
	}
	u := llm.Usage{InputTokens: 10_000, CachedReadTokens: 8_000, OutputTokens: 500}
	if c, ok := m.Cost(u, pricing.DialectFor(m.Provider)); ok {
		fmt.Printf("%s: window %d, cost %.4f %s\n", m.Name(), m.ContextWindow(), c.Amount, c.Currency)
	}
	// Output: openai/gpt-4.1: window 1047576, cost 0.0120 USD
}

// The embedded table merged with the user's file. A missing file at the
// default path is not an error; a file named by --models-file must exist.
func Example_override() {
	table := pricing.Default()
	path, explicit := "", false // explicit: the path came from --models-file
	if path == "" {
		path = pricing.DefaultOverridePath(os.Getenv)
	}
	if path != "" {
		override, err := pricing.Load(path)
		switch {
		case err == nil:
			table = table.Merge(override)
		case errors.Is(err, fs.ErrNotExist) && !explicit:
			// no user file
		default:
			fmt.Fprintln(os.Stderr, err)
			return
		}
	}
	_ = table
}
