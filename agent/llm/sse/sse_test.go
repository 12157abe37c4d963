package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type event struct {
	name, data string
}

func readAll(r *Reader) ([]event, error) {
	var got []event
	for {
		ev, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, event{ev.Name, string(ev.Data)})
	}
}

func TestReaderNext(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		maxLine int
		want    []event
		wantErr error // io.EOF for a clean end
	}{
		{
			name:    "empty input is a clean end",
			in:      "",
			wantErr: io.EOF,
		},
		{
			name:    "one data event",
			in:      "data: {\"a\":1}\n\n",
			want:    []event{{"", `{"a":1}`}},
			wantErr: io.EOF,
		},
		{
			name:    "CRLF line endings are stripped",
			in:      "data: x\r\n\r\ndata: y\r\n\r\n",
			want:    []event{{"", "x"}, {"", "y"}},
			wantErr: io.EOF,
		},
		{
			name:    "comments are skipped between and inside events",
			in:      ": OPENROUTER PROCESSING\n\ndata: a\n: keep-alive\n\n:\n\n",
			want:    []event{{"", "a"}},
			wantErr: io.EOF,
		},
		{
			name:    "multi-line data is joined with newlines",
			in:      "data: one\ndata: two\ndata:\ndata: four\n\n",
			want:    []event{{"", "one\ntwo\n\nfour"}},
			wantErr: io.EOF,
		},
		{
			name:    "only one leading space is removed from a value",
			in:      "data:no space\n\ndata:  two spaces\n\n",
			want:    []event{{"", "no space"}, {"", " two spaces"}},
			wantErr: io.EOF,
		},
		{
			name:    "event name is exposed and reset after dispatch",
			in:      "event: message_start\ndata: {}\n\ndata: plain\n\n",
			want:    []event{{"message_start", "{}"}, {"", "plain"}},
			wantErr: io.EOF,
		},
		{
			name:    "event without data is not dispatched",
			in:      "event: ping\n\ndata: x\n\n",
			want:    []event{{"", "x"}},
			wantErr: io.EOF,
		},
		{
			name:    "empty data line dispatches an empty event",
			in:      "data:\n\n",
			want:    []event{{"", ""}},
			wantErr: io.EOF,
		},
		{
			name:    "id retry and unknown fields are ignored",
			in:      "id: 7\nretry: 100\nfoo: bar\nnocolon\ndata: x\n\n",
			want:    []event{{"", "x"}},
			wantErr: io.EOF,
		},
		{
			name:    "field without colon is a field with an empty value",
			in:      "data\n\n",
			want:    []event{{"", ""}},
			wantErr: io.EOF,
		},
		{
			name:    "extra blank lines between events are harmless",
			in:      "\n\n\ndata: a\n\n\n\ndata: b\n\n",
			want:    []event{{"", "a"}, {"", "b"}},
			wantErr: io.EOF,
		},
		{
			name:    "leading byte order mark is ignored",
			in:      "\xEF\xBB\xBFdata: a\n\n",
			want:    []event{{"", "a"}},
			wantErr: io.EOF,
		},
		{
			name:    "event without its blank line at EOF is truncated",
			in:      "data: a\n\ndata: [DONE]\n",
			want:    []event{{"", "a"}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "line without newline at EOF is truncated",
			in:      "data: a\n\ndata: [DO",
			want:    []event{{"", "a"}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "trailing comment line is a clean end",
			in:      "data: a\n\n: bye\n",
			want:    []event{{"", "a"}},
			wantErr: io.EOF,
		},
		{
			name:    "line at the limit is accepted",
			in:      "data: 1234\r\n\n",
			maxLine: len("data: 1234"),
			want:    []event{{"", "1234"}},
			wantErr: io.EOF,
		},
		{
			name:    "line over the limit is an error",
			in:      "data: a\n\ndata: 12345\n\n",
			maxLine: len("data: 1234"),
			want:    []event{{"", "a"}},
			wantErr: ErrTooLong,
		},
		{
			name:    "data joined over the limit is an error",
			in:      "data: 1234\ndata: 1234\ndata: 1234\n\n",
			maxLine: 10,
			wantErr: ErrTooLong,
		},
		{
			name:    "line longer than the read buffer",
			in:      "data: " + strings.Repeat("x", 1<<20) + "\n\ndata: b\n\n",
			want:    []event{{"", strings.Repeat("x", 1<<20)}, {"", "b"}},
			wantErr: io.EOF,
		},
	}
	for _, tt := range tests {
		readers := map[string]func(string) io.Reader{
			"whole":    func(s string) io.Reader { return strings.NewReader(s) },
			"bytewise": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		}
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := readAll(NewReader(mk(tt.in), tt.maxLine))
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr == io.EOF && err != io.EOF {
					t.Errorf("clean end must be io.EOF itself, got %#v", err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d events %q, want %d %q", len(got), got, len(tt.want), tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d = %q, want %q", i, got[i], tt.want[i])
					}
				}
			})
		}
	}
}

func TestReaderPassesReadErrorsThrough(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event = %q, %v; want \"a\", nil", ev.Data, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
}

func BenchmarkReaderNext(b *testing.B) {
	const chunk = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n"
	in := strings.Repeat(chunk, 1000)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r := NewReader(strings.NewReader(in), 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
