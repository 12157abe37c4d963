// Package pricing knows what models cost and how large their context
// windows are. The data comes from models.json (format in
// docs/pricing.md), compiled into the binary as Go values
// (models_table.go, which TestDefaultTableIsModelsJSON keeps equal to the
// file, so that no start parses it), and a user file can override it;
// nothing is fetched at run time.
//
// # Lookup
//
// [Table.Lookup] finds a model by provider and model id. The provider is
// compared case-insensitively; the model id exactly. It tries, in order:
//
//  1. an entry whose "model" is the id;
//  2. an entry that lists the id in "aliases";
//  3. if the id ends in a date ("-YYYY-MM-DD" as OpenAI writes snapshot
//     ids, or "-YYYYMMDD" as Anthropic does), steps 1 and 2 again with the
//     date removed: gpt-4.1-2025-04-14 finds gpt-4.1 and
//     claude-sonnet-4-5-20250929 finds claude-sonnet-4-5.
//
// Anything else is unknown: in particular a local or OpenAI-compatible
// server used through provider "openai" with a model the table does not
// list (openai/llama3.1:8b) is not found. An unknown model costs nothing
// and shows no cost, and its context window is unknown (0).
//
// # Cost
//
// [Model.Cost] prices one model call's [llm.Usage]. Providers count cached
// prompt tokens differently, which [Dialect] names; see its constants.
// Prices are per million tokens; zero means unknown, not free. A model
// without both an input and an output price has no cost (Cost returns
// false). A cached-token price that is unknown falls back to the input
// price, so an incomplete entry never under-charges cached tokens.
// Reasoning tokens are part of the output tokens for every provider the
// agent speaks to and are not charged again.
//
// # Concurrency
//
// A [Table] is immutable once built and safe for concurrent use; [Default]
// is parsed once and shared.
package pricing
