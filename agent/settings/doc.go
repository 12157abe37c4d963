// Package settings holds layered, dotted-key configuration for the agent.
//
// A Settings value is one layer. Layers form a chain: typically the agent's
// defaults, then a layer loaded from its configuration file, then one layer
// per session for per-session overrides:
//
//	defaults := settings.New(map[string]any{"prompt": map[string]any{"output_format": "markdown"}})
//	config := defaults.Layer("config")
//	session := config.Child()
//	session.Set("prompt.output_format", "json") // defaults and config are unchanged
//
// Contract:
//
//   - Keys are dotted paths ("prompt.output_format"). Set creates the
//     intermediate maps it needs, replacing a non-map value that is in the
//     way in the layer being written. An empty key, or a key with an empty
//     segment ("a..b"), names nothing: Set ignores it and Get reports false.
//   - Get looks the key up in the layer itself, then in its parents. The
//     nearest layer that holds a non-map value wins. When the value is a
//     map, the maps of every layer down to the first non-map are merged
//     (nearer layers win, key by key), so a session that overrides
//     "prompt.output_format" still sees the agent's "prompt.role" under
//     Get("prompt").
//   - Writes go to the receiving layer only; a child never changes its
//     parents. Delete removes a key from the receiving layer only, so the
//     parent's value shows through again.
//   - Maps and slices are deep-copied on the way in (Set, Update, New) and
//     on the way out (Get, All), so callers can neither see nor cause
//     changes through aliasing. Nested map types other than map[string]any
//     are stored as given, so callers should treat them as immutable.
//   - Typed getters (String, Int, Float, Bool, Duration) return their
//     default when the key is missing or its value cannot be converted; the
//     conversions are listed on each getter.
//
// Concurrency: every method is safe for concurrent use. Each layer has its
// own lock; a read takes the read locks of the layers it visits one at a
// time, from the receiver towards the root. A read that races with writes
// to several layers therefore sees each layer at some point during the
// call, but not necessarily all layers at the same instant.
package settings
