package acpv2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The encoding machinery the generated and hand-written types share.

// Nullable is an optional member whose explicit null has its own meaning:
// in v2's upserts (tool_call_update, terminal_update, agent_message, ...)
// an omitted member leaves the stored value unchanged and null clears it.
//
//	Nullable[T]{}     absent: omitted on the wire (the field is tagged omitzero)
//	Null[T]()         present as null
//	Some(v)           present with value v
//
// Decoding sets Present for any member found, and Null when it was null.
type Nullable[T any] struct {
	Present bool // the member is on the wire (as a value or as null)
	Null    bool // the member is null; only meaningful when Present
	Value   T    // the value when Present && !Null
}

// Some returns a present, non-null Nullable holding v.
func Some[T any](v T) Nullable[T] { return Nullable[T]{Present: true, Value: v} }

// Null returns a Nullable that is present as null.
func Null[T any]() Nullable[T] { return Nullable[T]{Present: true, Null: true} }

// IsZero reports whether n is absent; encoding/json's omitzero uses it.
func (n Nullable[T]) IsZero() bool { return !n.Present }

// Get returns the value and whether there is one (present and not null).
func (n Nullable[T]) Get() (T, bool) { return n.Value, n.Present && !n.Null }

// MarshalJSON encodes null or the value; absence is omitzero's.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.Present || n.Null {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// UnmarshalJSON records presence, and null or the value.
func (n *Nullable[T]) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		*n = Nullable[T]{Present: true, Null: true}
		return nil
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*n = Nullable[T]{Present: true, Value: v}
	return nil
}

// UnknownVariant is a union variant this package does not know (a newer
// schema's, or a custom one, whose tag starts with "_"): Tag is its
// discriminator and Raw the whole object, sent back as it came.
type UnknownVariant struct {
	Tag string
	Raw json.RawMessage
}

// Custom returns an UnknownVariant for a custom variant: its tag (which
// must start with "_") under key, and v's members.
func Custom(key, tag string, v any) (*UnknownVariant, error) {
	if len(tag) < 2 || tag[0] != '_' {
		return nil, fmt.Errorf("acpv2: custom variant %q: custom tags start with \"_\"", tag)
	}
	raw, err := marshalTagged(key, tag, v)
	if err != nil {
		return nil, err
	}
	return &UnknownVariant{Tag: tag, Raw: raw}, nil
}

func (u *UnknownVariant) marshal(union string) ([]byte, error) {
	if len(u.Raw) == 0 {
		return nil, fmt.Errorf("acpv2: %s: unknown variant %q has no raw JSON", union, u.Tag)
	}
	return u.Raw, nil
}

var errNoVariant = errors.New("no variant set")

func emptyUnion(union string) error { return fmt.Errorf("acpv2: %s: %w", union, errNoVariant) }

// marshalTagged encodes v (a struct, or nil for a variant without
// members) with the member key: tag spliced in first.
func marshalTagged(key, tag string, v any) ([]byte, error) {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return nil, err
		}
		if len(body) < 2 || body[0] != '{' {
			return nil, fmt.Errorf("acpv2: variant %q did not encode as an object: %.40s", tag, body)
		}
	}
	out := make([]byte, 0, len(key)+len(tag)+len(body)+8)
	out = append(out, `{"`...)
	out = append(out, key...)
	out = append(out, `":`...)
	out = appendString(out, tag)
	if len(body) > 2 { // not "{}"
		out = append(out, ',')
		return append(out, body[1:]...), nil
	}
	return append(out, '}'), nil
}

// readTag returns the string member key of a JSON object, and whether it
// was there.
func readTag(data []byte, key, union string) (string, bool, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return "", false, fmt.Errorf("%s: %w", union, err)
	}
	raw, ok := members[key]
	if !ok || isNull(raw) {
		return "", false, nil
	}
	var tag string
	if err := json.Unmarshal(raw, &tag); err != nil {
		return "", false, fmt.Errorf("%s: %q must be a string", union, key)
	}
	return tag, true, nil
}

// requireTag is readTag for a union whose tag is required.
func requireTag(data []byte, key, union string) (string, error) {
	tag, ok, err := readTag(data, key, union)
	if err == nil && !ok {
		err = fmt.Errorf("%s: missing %q", union, key)
	}
	return tag, err
}

// decodeVariant decodes data into a new T.
func decodeVariant[T any](data []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return v, nil
}

// unknownVariant keeps a variant this package does not know, compacted so
// that it never carries a newline into a line-delimited stream.
func unknownVariant(tag string, data []byte) *UnknownVariant {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return &UnknownVariant{Tag: tag, Raw: append(json.RawMessage(nil), data...)}
	}
	return &UnknownVariant{Tag: tag, Raw: buf.Bytes()}
}

// mergeObjects concatenates the members of compact JSON objects that
// have no member in common.
func mergeObjects(parts ...[]byte) []byte {
	out := []byte{'{'}
	for _, p := range parts {
		if len(p) <= 2 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, p[1:len(p)-1]...)
	}
	return append(out, '}')
}

// nonNil returns s, or an empty slice for nil, so that required arrays
// encode as [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nonNilMap returns m, or an empty map for nil.
func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func isNull(data []byte) bool { return bytes.Equal(bytes.TrimSpace(data), []byte("null")) }

// appendString appends s as a JSON string, as encoding/json writes it.
func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

func unknownTag(union, key, tag string) error {
	return fmt.Errorf("acpv2: %s: unknown %s %q", union, key, tag)
}
