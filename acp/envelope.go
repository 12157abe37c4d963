package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// envelopeKeys are the members of a JSON-RPC message that jsonrpc2 reads.
var envelopeKeys = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// checkMessage decides whether line is one JSON-RPC 2.0 request, notification
// or response that the connection can decode as jsonrpc2.Request or
// jsonrpc2.Response with nothing lost. It reports whether the message is a
// request (or notification), returns the message id when it is usable for
// the reply, and a non-zero code with a message when the line must be
// rejected. Nothing here depends on framing: every Stream's messages go
// through it.
//
// Keys are matched exactly: encoding/json matches struct fields
// case-insensitively (with Unicode folding), so "METHOD" or "ıd" would be
// read as a different member by jsonrpc2 than by us; such keys and duplicate
// envelope keys are rejected rather than guessed at.
func checkMessage(line []byte) (id json.RawMessage, isRequest bool, code int64, msg string) {
	if !json.Valid(line) {
		return nil, false, CodeParseError, "parse error: not valid JSON"
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, false, CodeInvalidRequest, "invalid request: batches are not supported"
	default:
		return nil, false, CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	members, memberErr := topLevelMembers(line)
	if raw, ok := members["id"]; ok {
		if err := checkID(raw); err != nil {
			return nil, false, CodeInvalidRequest, "invalid request: " + err.Error()
		}
		if !bytes.Equal(raw, []byte("null")) {
			id = raw
		}
	}
	if memberErr != nil {
		return id, false, CodeInvalidRequest, "invalid request: " + memberErr.Error()
	}
	if v, ok := members["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return id, false, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	}
	method, isRequest := members["method"]
	_, hasResult := members["result"]
	errMember, hasError := members["error"]
	switch {
	case isRequest:
		if len(method) == 0 || method[0] != '"' {
			return id, false, CodeInvalidRequest, `invalid request: "method" must be a string`
		}
		if hasResult || hasError {
			return id, false, CodeInvalidRequest, "invalid request: a message cannot be both a request and a response"
		}
		if p, ok := members["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return id, false, CodeInvalidRequest, `invalid request: "params" must be an object`
		}
	case hasResult || hasError:
		if id == nil {
			// A response we cannot match to a request of ours; replying
			// to a response is not allowed, so it is dropped by the caller.
			return nil, false, CodeInvalidRequest, "invalid request: response without an id"
		}
		if hasError && string(errMember) != "null" {
			var e jsonrpc2.Error
			if errMember[0] != '{' || json.Unmarshal(errMember, &e) != nil {
				return id, false, CodeInvalidRequest, `invalid request: "error" must be an object with an integer "code" and a string "message"`
			}
		}
		if !hasResult && string(errMember) == "null" {
			return id, false, CodeInvalidRequest, `invalid request: a response needs a "result" or a non-null "error"`
		}
	default:
		return id, false, CodeInvalidRequest, `invalid request: neither "method" nor "result"/"error" is present`
	}
	return id, isRequest, 0, ""
}

// topLevelMembers splits a JSON object into its envelope members. It
// rejects duplicate envelope keys and keys that fold to an envelope key
// without being equal to it, but still returns what it read (so the reply
// can carry the id). obj must be valid JSON (json.Valid).
//
// It reads the object's members in place, without a json.Decoder: every
// message the agent receives goes through here on its connection's read
// loop (issue 30's burst: 200 prompts in a row on one stdio read loop). A
// key written with an escape or a byte outside ASCII is left to
// topLevelMembersDecoded, which unquotes keys as encoding/json does.
func topLevelMembers(obj []byte) (map[string]json.RawMessage, error) {
	members := make(map[string]json.RawMessage, 4)
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return topLevelMembersDecoded(obj)
	}
	var firstErr error
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		end := i + 1
		for end < len(obj) && obj[end] != '"' {
			if c := obj[end]; c == '\\' || c >= utf8.RuneSelf {
				return topLevelMembersDecoded(obj)
			}
			end++
		}
		key := obj[i+1 : end]
		i = skipSpace(obj, end+1) // at ':'
		start := skipSpace(obj, i+1)
		stop := skipValue(obj, start)
		if stop <= start || stop > len(obj) {
			return topLevelMembersDecoded(obj)
		}
		val := json.RawMessage(obj[start:stop])
		if string(key) == "id" {
			val = bytes.Clone(val) // returned to the caller, which may keep it past obj
		}
		for _, k := range envelopeKeys {
			if string(key) == k {
				if _, dup := members[k]; dup && firstErr == nil {
					firstErr = fmt.Errorf("duplicate member %q", k)
				}
				members[k] = val
				break
			}
			if firstErr == nil && len(key) == len(k) && strings.EqualFold(string(key), k) {
				firstErr = fmt.Errorf("member %q is not %q (names are case-sensitive)", key, k)
			}
		}
		i = skipSpace(obj, stop)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return members, firstErr
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at i, in
// valid JSON.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null.
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string starting at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// topLevelMembersDecoded is topLevelMembers through encoding/json's
// tokenizer, for the keys that need unquoting.
func topLevelMembersDecoded(obj []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	members := make(map[string]json.RawMessage, 4)
	if _, err := dec.Token(); err != nil { // '{'
		return members, err
	}
	var firstErr error
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return members, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return members, err
		}
		for _, k := range envelopeKeys {
			if key == k {
				if _, dup := members[key]; dup && firstErr == nil {
					firstErr = fmt.Errorf("duplicate member %q", key)
				}
				members[key] = val
				break
			}
			if strings.EqualFold(key, k) && firstErr == nil {
				firstErr = fmt.Errorf("member %q is not %q (names are case-sensitive)", key, k)
			}
		}
	}
	return members, firstErr
}

// checkID accepts the ids jsonrpc2 can echo back exactly: strings, null and
// integers in [0, MaxInt64]. Fractions, exponents, negative numbers (which
// jsonrpc2 would echo as large unsigned numbers), booleans, objects and
// arrays are refused.
//
// A string id must also survive the round trip unchanged: encoding/json
// turns invalid UTF-8 and lone UTF-16 surrogate escapes ("\ud800") into
// U+FFFD, so such a request would be run and answered under another id,
// and echoing its raw bytes would put invalid UTF-8 on stdout. Those ids
// are refused (the caller answers -32600 with id null).
func checkID(raw json.RawMessage) error {
	switch raw[0] {
	case '"':
		if !utf8.Valid(raw) {
			return errors.New(`"id" is not valid UTF-8`)
		}
		if i := loneSurrogate(raw); i >= 0 {
			return fmt.Errorf(`"id" has a lone UTF-16 surrogate escape (%s)`, raw[i:i+6])
		}
		return nil
	case 'n':
		return nil
	}
	if raw[0] >= '0' && raw[0] <= '9' {
		if n, err := strconv.ParseUint(string(raw), 10, 64); err == nil && n <= math.MaxInt64 {
			return nil
		}
	}
	return fmt.Errorf(`"id" must be a string or a non-negative integer, got %s`, truncate(string(raw), 40))
}

// inexactCancel reports whether line is a $/cancel_request whose
// requestId fails checkID: it would cancel the request whose id is what
// encoding/json makes of it (U+FFFD for a lone surrogate).
func inexactCancel(line []byte) bool {
	if !bytes.Contains(line, []byte(`"$/cancel_request"`)) {
		return false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != MethodCancelRequest || len(m.Params.RequestID) == 0 {
		return false
	}
	return checkID(m.Params.RequestID) != nil
}

// loneSurrogate returns the offset of the first \u escape in the JSON
// string literal lit that is half of a surrogate pair without its other
// half, or -1. lit is valid JSON, so every backslash starts an escape.
func loneSurrogate(lit []byte) int {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		if lit[i+1] != 'u' {
			i++ // skip the escaped character
			continue
		}
		r := hex4(lit[i+2 : i+6])
		switch {
		case 0xDC00 <= r && r <= 0xDFFF: // low half first
			return i
		case 0xD800 <= r && r <= 0xDBFF:
			if i+12 > len(lit) || lit[i+6] != '\\' || lit[i+7] != 'u' {
				return i
			}
			if lo := hex4(lit[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
				return i
			}
			i += 11 // the pair
		default:
			i += 5
		}
	}
	return -1
}

// hex4 decodes four hex digits (valid JSON guarantees them).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
