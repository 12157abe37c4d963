package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

func TestReadLineLimits(t *testing.T) {
	const max = 100
	tests := []struct {
		name  string
		input string
		want  []string // "" entries are lines; "TOO LONG" marks errLineTooLong
	}{
		{"exactly at the limit", strings.Repeat("a", max) + "\nnext\n", []string{strings.Repeat("a", max), "next"}},
		{"one over the limit", strings.Repeat("a", max+1) + "\nnext\n", []string{"TOO LONG", "next"}},
		{"far over the buffer size", strings.Repeat("a", 200<<10) + "\nnext\n", []string{"TOO LONG", "next"}},
		{"last line without newline", "one\ntwo", []string{"one", "two"}},
		{"over-long last line without newline", strings.Repeat("a", max+5), []string{"TOO LONG"}},
		{"crlf", "one\r\n", []string{"one\r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewLineStream(strings.NewReader(tt.input), io.Discard, max)
			var got []string
			for {
				line, err := s.readLine()
				if errors.Is(err, io.EOF) {
					break
				}
				if errors.Is(err, errLineTooLong) {
					got = append(got, "TOO LONG")
					continue
				}
				require.NoError(t, err)
				got = append(got, string(line))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestConnSkipsBadLinesAndAnswersThem feeds a mix of lines through a
// LineStream into a connection and checks what it hands on and what it
// writes.
func TestConnSkipsBadLinesAndAnswersThem(t *testing.T) {
	input := strings.Join([]string{
		``,
		`nonsense`,
		`{"jsonrpc":"2.0","id":1,"method":"a"}`,
		`  `,
		`[1,2]`,
		strings.Repeat("x", 200),
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":2,"error":null}`,
		`{"jsonrpc":"2.0","method":"b","params":{}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	var got []*request
	c := newRPCConn(NewLineStream(strings.NewReader(input), &out, 100), slog.New(slog.DiscardHandler),
		func(r *request) { got = append(got, r) })
	c.read(context.Background())

	require.Len(t, got, 2)
	assert.Equal(t, "a", got[0].Method)
	assert.False(t, got[0].Notif)
	assert.Equal(t, "b", got[1].Method)
	assert.True(t, got[1].Notif)

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: not valid JSON"}}`, lines[0])
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported"}}`, lines[1])
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: message longer than 100 bytes"}}`, lines[2])
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: a response needs a \"result\" or a non-null \"error\""}}`, lines[3])
}

// FuzzCheckMessage: checkMessage must never panic, must reject what
// jsonrpc2 cannot decode (a decode failure there would close the
// connection), and must return a usable id.
func FuzzCheckMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","id":"a","result":null}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","id":-1,"method":"x"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`,
		`[{"jsonrpc":"2.0"}]`, `42`, `null`, `{}`, `{"jsonrpc":"2.0","id":1,"result":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`,
		`{"jsonrpc":"2.0","id":1,"error":5}`,
		// Ids that cannot be echoed exactly (issue 13.7).
		`{"jsonrpc":"2.0","id":"\ud800","method":"session/new","params":{}}`,
		`{"jsonrpc":"2.0","id":"\udc00x","method":"x"}`,
		`{"jsonrpc":"2.0","id":"a\ud83d","method":"x"}`,
		`{"jsonrpc":"2.0","id":"\ud83d\u0041","method":"x"}`,
		`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"x"}`, // a valid pair
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"x\"}", // CESU surrogate bytes
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":5}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"ok\",\"method\":\"\xff\"}",
		"{\"jsonrpc\":\"1.0\",\"id\":\"\xc3\",\"result\":1}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id, isRequest, code, msg := checkMessage(line)
		if id != nil {
			var v jsonrpc2.ID
			if err := json.Unmarshal(id, &v); err != nil {
				t.Fatalf("returned id %s that jsonrpc2 cannot read: %v", id, err)
			}
			assertEchoable(t, id)
		}
		if code != 0 {
			if msg == "" {
				t.Fatal("rejection without a message")
			}
			// What the client gets back is one line of UTF-8 JSON.
			reply, err := encodeRejection(id, code, msg)
			if err != nil || !utf8.Valid(reply) || !json.Valid(reply) {
				t.Fatalf("reply to %q is not UTF-8 JSON: %q", line, reply)
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("accepted a line that is not an object: %v", err)
		}
		if _, hasMethod := m["method"]; hasMethod != isRequest {
			t.Fatalf("%q: isRequest %v, but a method member is %v", line, isRequest, hasMethod)
		}
		var err error
		if isRequest {
			var r jsonrpc2.Request
			err = json.Unmarshal(line, &r)
		} else {
			var r jsonrpc2.Response
			err = json.Unmarshal(line, &r)
			if err == nil && r.Result == nil && r.Error == nil {
				err = errors.New("neither result nor error")
			}
		}
		if err != nil {
			t.Fatalf("accepted %q, which jsonrpc2 cannot decode: %v", line, err)
		}
	})
}

// assertEchoable fails unless jsonrpc2 echoes the raw id as the same
// value: valid UTF-8, and for a string, no U+FFFD that the raw text does
// not spell (encoding/json substitutes it for invalid UTF-8 and lone
// surrogates).
func assertEchoable(t *testing.T, raw json.RawMessage) {
	t.Helper()
	if !utf8.Valid(raw) {
		t.Fatalf("returned id %q is not UTF-8", raw)
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return
	}
	spelled := bytes.Contains(raw, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`))
	if strings.ContainsRune(s, utf8.RuneError) && !spelled {
		t.Fatalf("returned id %q decodes to %q: it would be echoed as another id", raw, s)
	}
}

func TestCheckMessageRefusesIDsThatCannotBeEchoed(t *testing.T) {
	cases := []struct {
		line   string
		reject bool
	}{
		{`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":"\uDBFF","method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":"\udc00","method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":"a\ud83d","method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":"\ud83d\u0041","method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":"\ud83d\n","method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":"\ud83d\ud83d","method":"x"}`, true},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}", true},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"x\"}", true},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"ab\xc3\",\"method\":\"x\"}", true},
		{`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"x"}`, false},
		{`{"jsonrpc":"2.0","id":"\\ud800","method":"x"}`, false}, // an escaped backslash, then text
		{`{"jsonrpc":"2.0","id":"\u00e9\ufffd","method":"x"}`, false},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\",\"method\":\"x\"}", false},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			id, _, code, msg := checkMessage([]byte(c.line))
			if !c.reject {
				assert.Zero(t, code, msg)
				return
			}
			assert.Equal(t, CodeInvalidRequest, code, msg)
			assert.Nil(t, id, "the reply carries id null")
			reply, err := encodeRejection(id, code, msg)
			require.NoError(t, err)
			assert.True(t, utf8.Valid(reply), "%q", reply)
			assert.Contains(t, string(reply), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`)
		})
	}
}

// TestUpdateLineMatchesGenericEncoding checks the outbox's hand-built
// session/update line against the generic encoding of the same message,
// for every SessionNotification golden fixture.
func TestUpdateLineMatchesGenericEncoding(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "acp", "SessionNotification*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var n SessionNotification
			require.NoError(t, json.Unmarshal(data, &n))
			n.Meta = nil // the outbox never sets notification-level _meta
			line, err := appendUpdateLine(nil, n.SessionID, &n.Update)
			require.NoError(t, err)
			require.True(t, bytes.HasSuffix(line, []byte("\n")))
			assert.Equal(t, 1, bytes.Count(line, []byte("\n")), "one line")
			want, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": MethodSessionUpdate, "params": n})
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(line))
		})
	}
}

// The writer's last guard: a message carrying invalid UTF-8 (a relayed
// json.RawMessage) still goes out as one line of UTF-8 JSON, written
// alone or in an outbox's burst.
func TestWritesKeepStdoutUTF8(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.DiscardHandler)
	c := newRPCConn(NewLineStream(bytes.NewReader(nil), &out, 0), log, nil)
	require.NoError(t, c.notify(context.Background(), "", "x", map[string]json.RawMessage{"x": json.RawMessage("\"a\xffb\"")}))
	o := newOutbox(c, log)
	o.flush([]byte("{\"y\":\"\xed\xa0\x80\"}\n{\"z\":1}\n"))
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	require.Len(t, lines, 3)
	for _, line := range lines {
		assert.True(t, utf8.Valid(line), "%q", line)
		assert.True(t, json.Valid(line), "%q", line)
	}
	assert.Contains(t, out.String(), "a\uFFFDb")
}

// TestBurstsReachEveryStream: an outbox's burst goes to a LineStream as
// it lies, and to any other Stream as one Write of its messages, each
// naming the session.
func TestBurstsReachEveryStream(t *testing.T) {
	lines := []byte("{\"a\":1}\n{\"b\":2}\n")
	log := slog.New(slog.DiscardHandler)

	var out bytes.Buffer
	c := newRPCConn(NewLineStream(bytes.NewReader(nil), &out, 0), log, nil)
	_, err := c.writeLines(context.Background(), "s1", lines, nil)
	require.NoError(t, err)
	assert.Equal(t, string(lines), out.String())

	rec := &recordingStream{}
	c = newRPCConn(rec, log, nil)
	_, err = c.writeLines(context.Background(), "s1", lines, nil)
	require.NoError(t, err)
	assert.Equal(t, [][]Message{{{Data: []byte(`{"a":1}`), SessionID: "s1"}, {Data: []byte(`{"b":2}`), SessionID: "s1"}}}, rec.writes)
}

// recordingStream records what is written to it.
type recordingStream struct{ writes [][]Message }

func (s *recordingStream) Read(context.Context) (Message, error) { return Message{}, io.EOF }
func (s *recordingStream) Close() error                          { return nil }
func (s *recordingStream) Write(_ context.Context, msgs ...Message) error {
	var w []Message
	for _, m := range msgs {
		w = append(w, Message{Data: append([]byte(nil), m.Data...), SessionID: m.SessionID})
	}
	s.writes = append(s.writes, w)
	return nil
}

// TestUpdateLineV2MatchesGenericEncoding: the outbox's direct encoding of
// v2 text chunks is what the generic encoding gives, for every kind of
// chunk and text that needs escaping, and other updates go the generic
// way.
func TestUpdateLineV2MatchesGenericEncoding(t *testing.T) {
	text := func(s string) acpv2.ContentBlock { return acpv2.ContentBlock{Text: &acpv2.TextContent{Text: s}} }
	for _, u := range []acpv2.SessionUpdate{
		{AgentMessageChunk: &acpv2.ContentChunk{MessageID: "m1", Content: text("plain")}},
		{AgentThoughtChunk: &acpv2.ContentChunk{MessageID: "m\"2", Content: text("<a> & \"b\"\n\u2028\xff")}},
		{UserMessageChunk: &acpv2.ContentChunk{MessageID: "", Content: text("")}},
		{AgentMessageChunk: &acpv2.ContentChunk{MessageID: "m3", Content: text("x"), Meta: json.RawMessage(`{"k":1}`)}},
		{AgentMessageChunk: &acpv2.ContentChunk{MessageID: "m4", Content: acpv2.ContentBlock{Text: &acpv2.TextContent{Text: "x", Annotations: &acpv2.Annotations{Priority: new(float64)}}}}},
		{StateUpdate: &acpv2.StateUpdate{Idle: &acpv2.IdleStateUpdate{StopReason: acpv2.StopReasonEndTurn}}},
	} {
		line, err := appendUpdateLineV2(nil, "s<1>", &u)
		require.NoError(t, err)
		assert.Equal(t, 1, bytes.Count(line, []byte("\n")), "one line")
		want, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
			"params": acpv2.UpdateSessionNotification{SessionID: "s<1>", Update: u}})
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(line))
		assert.True(t, utf8.Valid(line) || bytes.Contains(want, []byte(`\ufffd`)), "%q", line)
	}
}

// FuzzTopLevelMembersAsTheDecoderReadsThem: the envelope's members read
// in place (the read loop's fast path) are what encoding/json's tokenizer
// reads, member for member, with the same error, for any valid JSON
// object: keys with escapes, keys that fold to an envelope key, non-ASCII
// keys, duplicates, nested values with brackets and quotes in strings,
// and whitespace anywhere.
func FuzzTopLevelMembersAsTheDecoderReadsThem(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"go"}]}}`,
		` { "jsonrpc" : "2.0" , "id" : "a\"b}" , "result" : [ 1 , { "x" : "]}" } ] } `,
		"{\n\t\"jsonrpc\":\"2.0\",\r\n\"id\":-12.5e3,\"error\":{\"code\":-1,\"message\":\"\\\\\"}}",
		`{"jsonrpc":"2.0","ID":1,"Method":"x","method":"y","method":"z"}`,
		`{"jsonrpc":"2.0","\u0069d":7,"method":"x"}`,
		`{"jsonrpc":"2.0","i\"d":7,"method":"x"}`,
		`{"jſonrpc":"2.0","id":true,"method":"x","params":null}`,
		"{\"jsonrpc\":\"2.0\",\"id\xff\":1,\"method\":\"x\"}",
		`{"jsonrpc":"2.0","id":null,"method":"x","params":{"a":{"b":[[[]]],"c":"{[\"]}"}},"extra":false}`,
		`{}`, `{ }`, `{"a":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		if !json.Valid(obj) || bytes.TrimLeft(obj, " \t\r\n")[0] != '{' {
			return
		}
		got, gotErr := topLevelMembers(obj)
		want, wantErr := topLevelMembersDecoded(obj)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: error %v, the decoder's %v", obj, gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: members %q, the decoder's %q", obj, got, want)
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: member %s is %q, the decoder's %q", obj, k, got[k], v)
			}
		}
	})
}
