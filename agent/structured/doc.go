// Package structured turns a structured prompt into messages for a model,
// and the model's answer back into validated, structured data, including
// while the answer streams in.
//
// The pieces, and their contracts:
//
//   - Prompt (prompt.go) holds Info, Instruct, Input, extra Sections, an
//     Output definition, the OutputFormat the user chose, and the chat
//     History. Format gives the effective output format: the user's
//     choice if any, else "json" when Output is set, else "markdown".
//     ToText renders the completion-style layout ("user:", "[INFO]:",
//     ..., "[OUTPUT]:", "assistant:"); ToMessages renders chat messages,
//     flattening history parts to text ("\n\n"-joined) unless rich;
//     StrictRoleOrders makes roles alternate. Non-text history parts are
//     skipped with a warning to Prompt.Logger where text is required.
//
//   - Node (output.go) is an output definition: objects with ordered,
//     described fields, lists, and typed leaves. Describe renders it for
//     the prompt (with "// desc" comments); Schema derives a JSON Schema
//     (draft 2020-12); FromJSONSchema goes the other way.
//
//   - OutputModel (model.go) parses an answer: it extracts the JSON (from
//     a ```json fence or after leading prose), coerces it to the schema
//     (single values wrapped into lists, "456" → 456, 1 → "1",
//     "true" → true) and validates it (agent/internal/jsonvalidate, over
//     google/jsonschema-go); a
//     *ValidationError names the JSON path of each problem.
//
//   - Parser (parser.go) parses JSON incrementally from chunks of any
//     size, emitting an Event (JSON Pointer path, value so far, complete
//     flag) per completed value, and optionally per partial update. Its
//     final value equals encoding/json.Unmarshal's for valid documents;
//     it never panics; its memory is the value being built plus a frame
//     per nesting level.
//
//   - Broadcast and Response (broadcast.go) let several consumers read one
//     response's events independently: the log of a response is kept
//     whole, each subscriber has its own cursor, late subscribers start
//     from the first event, and nobody can block anybody.
//
//   - Model, Plan, RunTools, InjectResults and RequestWithTools (tools.go)
//     drive tool use in two requests: the model plans calls as structured
//     output, the caller runs them, and the results are injected as an
//     action_results section into the second request.
//
// Concurrency: Parser is single-goroutine. Prompt and Node are plain
// values: render or use them from many goroutines only while nobody
// modifies them. OutputModel, Broadcast and Response are safe for
// concurrent use; a Subscription belongs to one goroutine. Values produced
// by parsing (maps, slices) are shared between events, snapshots and
// subscribers and must be treated as read-only.
package structured
