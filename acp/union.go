package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Helpers for the hand-written MarshalJSON/UnmarshalJSON of union and
// flattened types. Encoding a tagged variant marshals the variant struct once
// and splices the tag member in after its opening brace.

// unionPrefix returns `{"<key>":"<tag>"` for spliceTag. Keys and tags are
// plain ASCII identifiers, so no escaping is needed.
func unionPrefix(key, tag string) string { return `{"` + key + `":"` + tag + `"` }

// spliceTag returns prefix (an unterminated object holding the tag member)
// followed by the members of body, a compact JSON object from json.Marshal.
func spliceTag(prefix string, body []byte) []byte {
	out := make([]byte, 0, len(prefix)+len(body)+1)
	out = append(out, prefix...)
	if len(body) > 2 { // not "{}"
		out = append(out, ',')
		return append(out, body[1:]...)
	}
	return append(out, '}')
}

// marshalTagged marshals v (a pointer to a struct) and splices the tag in.
func marshalTagged(prefix string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("acp: variant did not encode as an object: %.40s", body)
	}
	return spliceTag(prefix, body), nil
}

// mergeObjects concatenates the members of compact JSON objects into one
// object. Callers make sure the parts have no member in common.
func mergeObjects(parts ...[]byte) []byte {
	n := 2
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 1, n)
	out[0] = '{'
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

// isJSONNull reports whether data is the literal null (ignoring whitespace).
func isJSONNull(data []byte) bool {
	i := 0
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	j := len(data)
	for j > i && isJSONSpace(data[j-1]) {
		j--
	}
	return string(data[i:j]) == "null"
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// cloneRaw copies data (an UnmarshalJSON must not keep the decoder's
// buffer), compacted so that it never carries newlines into the
// line-delimited stream even when its MarshalJSON is called directly.
func cloneRaw(data []byte) json.RawMessage {
	var buf bytes.Buffer
	buf.Grow(len(data))
	if err := json.Compact(&buf, data); err != nil {
		return append(json.RawMessage(nil), data...)
	}
	return buf.Bytes()
}

// Tag probes: decode only the discriminator member of an object.
type (
	probeType struct {
		Tag *string `json:"type"`
	}
	probeSessionUpdate struct {
		Tag *string `json:"sessionUpdate"`
	}
	probeOutcome struct {
		Tag *string `json:"outcome"`
	}
	probeMode struct {
		Tag *string `json:"mode"`
	}
)

// readTag returns the discriminator of a tagged union object, and whether it
// was present. name is the union's name for error messages.
func readTag(data []byte, key, name string) (tag string, ok bool, err error) {
	var p *string
	switch key {
	case "type":
		var v probeType
		err = json.Unmarshal(data, &v)
		p = v.Tag
	case "sessionUpdate":
		var v probeSessionUpdate
		err = json.Unmarshal(data, &v)
		p = v.Tag
	case "outcome":
		var v probeOutcome
		err = json.Unmarshal(data, &v)
		p = v.Tag
	case "mode":
		var v probeMode
		err = json.Unmarshal(data, &v)
		p = v.Tag
	default:
		return "", false, fmt.Errorf("acp: %s: unsupported tag %q", name, key)
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", name, err)
	}
	if p == nil {
		return "", false, nil
	}
	return *p, true, nil
}

// requireTag is readTag for unions whose tag is mandatory.
func requireTag(data []byte, key, name string) (string, error) {
	tag, ok, err := readTag(data, key, name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%s: missing %q", name, key)
	}
	return tag, nil
}

// decodeVariant decodes data into a new T.
func decodeVariant[T any](data []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return v, nil
}

var errNoVariant = errors.New("no variant set")

func emptyUnionError(name string) error { return fmt.Errorf("acp: %s: %w", name, errNoVariant) }

// nonNil returns s, or an empty slice when s is nil, so that required arrays
// encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// jsonPlain[b]: ASCII byte b is written as it is in a JSON string (not a
// control character, quote, backslash, or <, > and & which
// encoding/json escapes for HTML).
var jsonPlain = [256]bool{
	' ': true, '!': true, '#': true, '$': true, '%': true, '\'': true, '(': true, ')': true, '*': true, '+': true, ',': true, '-': true, '.': true, '/': true,
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	':': true, ';': true, '=': true, '?': true, '@': true,
	'A': true, 'B': true, 'C': true, 'D': true, 'E': true, 'F': true, 'G': true, 'H': true, 'I': true, 'J': true, 'K': true, 'L': true, 'M': true,
	'N': true, 'O': true, 'P': true, 'Q': true, 'R': true, 'S': true, 'T': true, 'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true,
	'[': true, ']': true, '^': true, '_': true, '`': true,
	'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true, 'g': true, 'h': true, 'i': true, 'j': true, 'k': true, 'l': true, 'm': true,
	'n': true, 'o': true, 'p': true, 'q': true, 'r': true, 's': true, 't': true, 'u': true, 'v': true, 'w': true, 'x': true, 'y': true, 'z': true,
	'{': true, '|': true, '}': true, '~': true, 0x7f: true,
}

// appendJSONString appends s as a JSON string exactly as encoding/json
// encodes it (with HTML escaping, \ufffd for invalid UTF-8 and escaped
// U+2028/U+2029), for the hand-written fast paths. TestUnionAppendJSONString
// checks it against json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Runs of plain ASCII, most of any text, in a tight loop.
		for i < len(s) && jsonPlain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters and <, >, &
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
