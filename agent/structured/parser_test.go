package structured

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// feedChunks writes s to p in chunks of n bytes and closes it.
func feedChunks(p *Parser, s string, n int) error {
	for off := 0; off < len(s); off += n {
		if _, err := p.Write([]byte(s[off:min(off+n, len(s))])); err != nil {
			return err
		}
	}
	return p.Close()
}

func unmarshal(t testing.TB, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

var validDocs = []string{
	`{}`, `[]`, `{"a":1}`, `[1,2,3]`, `"str"`, `42`, `-0`, `0.5`, `1e3`, `-1.25E-2`, `true`, `false`, `null`,
	` { "a" : [ 1 , { "b" : null } , "x" ] , "c" : true } `,
	`{"items":[{"title":"t1","price":12},{"title":"t2","price":3.5}],"total":15.5}`,
	`"esc: \" \\ \/ \b \f \n \r \t"`,
	`"unicode: \u00e9 \u4e2d \ud83d\ude00 é 中 😀"`,
	`"lone: \ud800 x \udc00 \ud800\ud800\udc00 \ud83d\n"`,
	`{"dup":1,"dup":2}`,
	`[[[[[]]]],[{}],{"":""}]`,
	`{"k~/":{"a/b":"~"}}`,
	`12345678901234567890`, `1.7976931348623157e308`, `5e-324`, `0.1234567890123456789`,
	`[9007199254740993, 123456789012345.6, -999999999999999]`,
	"\"raw invalid utf8: \xff\xfe \xe2\x82 end\"",
	"\"surrogate raw: \xed\xa0\x80\"",
	// Key prediction must cope with objects whose keys change.
	`[{"a":1,"b":2},{"b":3,"a":4},{"a":5,"c":6,"d":7},{"a":8},{"a":{"a":[{"x":1},{"x":2,"y":3}]}}]`,
}

func TestParserFinalValueEqualsUnmarshal(t *testing.T) {
	for _, doc := range validDocs {
		want := unmarshal(t, doc)
		for _, n := range []int{1, 2, 3, 5, 7, 4096} {
			for _, mode := range []Mode{EmitComplete, EmitPartial, EmitNone} {
				p := NewParser(WithMode(mode))
				require.NoError(t, feedChunks(p, doc, n), "doc %q chunk %d", doc, n)
				require.True(t, p.Done())
				assert.Equal(t, want, p.Value(), "doc %q chunk %d mode %d", doc, n, mode)
				if mode != EmitNone {
					ev := p.Events()
					require.NotEmpty(t, ev)
					last := ev[len(ev)-1]
					assert.Equal(t, "", last.Path)
					assert.True(t, last.Complete)
					assert.Equal(t, want, last.Value)
				}
			}
		}
	}
}

func TestParserCompleteEventsPathsInOrder(t *testing.T) {
	p := NewParser()
	ev, err := p.Feed(`{"items":[{"title":"a","n":1}],"k~/x":true}`)
	require.NoError(t, err)
	var paths []string
	for _, e := range ev {
		assert.True(t, e.Complete)
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"/items/0/title", "/items/0/n", "/items/0", "/items", "/k~0~1x", ""}, paths)
	assert.Equal(t, "a", ev[0].Value)
	assert.Equal(t, 1.0, ev[1].Value)
	assert.Equal(t, map[string]any{"title": "a", "n": 1.0}, ev[2].Value)
}

func TestParserPartialEvents(t *testing.T) {
	p := NewParser(WithMode(EmitPartial))
	var all []Event
	for _, c := range []string{`{"re`, `ply":"Hel`, `lo \u00`, `e9 wor`, `ld","n":[1`, `2]}`} {
		ev, err := p.Feed(c)
		require.NoError(t, err)
		all = append(all, ev...)
	}
	require.NoError(t, p.Close())
	var got []string
	for _, e := range all {
		s, _ := e.Value.(string)
		got = append(got, e.Path+"|"+s+"|"+e.Delta+"|"+map[bool]string{true: "C", false: "P"}[e.Complete])
	}
	assert.Equal(t, []string{
		"|||P", // the object opens
		"/reply|Hel|Hel|P",
		"/reply|Hello |lo |P", // the \u escape is incomplete: not yet reported
		"/reply|Hello é wor|é wor|P",
		"/reply|Hello é world|ld|C",
		"/n|||P", // the array opens
		"/n/0|||C",
		"/n|||C",
		"|||C",
	}, got)
	assert.Equal(t, 12.0, all[6].Value)
	assert.Equal(t, map[string]any{}, all[0].Value)
	assert.Equal(t, map[string]any{"reply": "Hello é world", "n": []any{12.0}}, p.Value())
}

func TestParserSplitUTF8IsNotReportedBroken(t *testing.T) {
	p := NewParser(WithMode(EmitPartial))
	ev, err := p.Feed("\"a\xe4\xb8")
	require.NoError(t, err)
	require.Len(t, ev, 1)
	assert.Equal(t, "a", ev[0].Value)
	ev, err = p.Feed("\xad\"")
	require.NoError(t, err)
	require.Len(t, ev, 1)
	assert.Equal(t, "a中", ev[0].Value)
	assert.Equal(t, "中", ev[0].Delta)
}

func TestParserSkipsProseAndFences(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"fence", "Sure! Here it is:\n```json\n{\"a\": [1, 2]}\n```\nAnything else?", `{"a":[1,2]}`},
		{"fence scalar", "```json\n\"just a string\"\n```", `"just a string"`},
		{"fence first", "```\n[1]\n```", `[1]`},
		{"prose", "The answer is {\"ok\": true} as requested.", `{"ok":true}`},
		{"prose with brackets", "See [the docs](http://x) then {\"ok\": 1}", `{"ok":1}`},
		{"prose starting like a literal", "no problem, here: {\"a\": null}", `{"a":null}`},
		{"prose starting like a string", "\"quoted\nwith newline\" then [true]", `[true]`},
		{"trailing prose", "[1, 2] and that's it {\"x\":1}", `[1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unmarshal(t, tt.want)
			for _, n := range []int{1, 2, 3, 4096} {
				p := NewParser()
				require.NoError(t, feedChunks(p, tt.in, n))
				assert.Equal(t, want, p.Value(), "chunk %d", n)
			}
		})
	}
}

func TestParserErrors(t *testing.T) {
	var syn *SyntaxError
	p := NewParser()
	require.ErrorIs(t, feedChunks(p, "nothing to see here", 3), ErrNoJSON)

	p = NewParser()
	require.ErrorIs(t, feedChunks(p, `{"a": [1, 2`, 3), ErrIncomplete)

	// An object that begins the text and is malformed fails for good,
	// even if a valid object follows.
	p = NewParser()
	err := feedChunks(p, `{"a": x} {"b": 1}`, 2)
	require.ErrorAs(t, err, &syn)
	assert.Equal(t, int64(6), syn.Offset)
	assert.False(t, p.Done())
	assert.Error(t, p.Err())

	for _, bad := range []string{`[1,]`, `{"a" 1}`, `[01]`, `{"a":1,}`, `["\x01"]`, `["\q"]`, `["\u12G4"]`, `[1e]`, `[-]`, `[tru]`, `{1:2}`} {
		p := NewParser()
		assert.Error(t, feedChunks(p, bad, 1), bad)
		assert.Nil(t, p.Value(), bad)
	}

	p = NewParser()
	require.NoError(t, feedChunks(p, `1`, 1))
	_, err = p.Write([]byte("x"))
	assert.ErrorIs(t, err, ErrClosed)

	p = NewParser(WithMaxDepth(3))
	err = feedChunks(p, `[[[[1]]]]`, 4)
	require.ErrorAs(t, err, &syn)
	assert.Contains(t, syn.Msg, "max depth")
	p = NewParser(WithMaxDepth(3))
	assert.NoError(t, feedChunks(p, `[[[1]]]`, 4))

	// A number out of float64 range is refused, like encoding/json does.
	p = NewParser()
	assert.Error(t, feedChunks(p, `[1e400]`, 2))
	p = NewParser()
	assert.Error(t, feedChunks(p, `1e400`, 2))
}

func TestParserSnapshot(t *testing.T) {
	p := NewParser()
	assert.Nil(t, p.Snapshot())
	_, _ = p.Feed(`{"items":[{"title":"Hel`)
	assert.Equal(t, map[string]any{"items": []any{map[string]any{"title": "Hel"}}}, p.Snapshot())
	_, _ = p.Feed(`lo","price":12`)
	// The number is not terminated yet, so it is not part of the snapshot.
	snap := p.Snapshot()
	assert.Equal(t, map[string]any{"items": []any{map[string]any{"title": "Hello"}}}, snap)
	_, _ = p.Feed(`},{"ti`)
	assert.Equal(t, map[string]any{"items": []any{map[string]any{"title": "Hello", "price": 12.0}, map[string]any{}}}, p.Snapshot())
	_, _ = p.Feed(`tle":"x"}]}`)
	assert.Equal(t, unmarshal(t, `{"items":[{"title":"Hello","price":12},{"title":"x"}]}`), p.Snapshot())
	// Snapshots are copies: later parsing did not change the earlier one.
	assert.Equal(t, map[string]any{"items": []any{map[string]any{"title": "Hello"}}}, snap)
}

func TestParserSnapshotNestedArrays(t *testing.T) {
	p := NewParser()
	_, _ = p.Feed(`[[1,2],[3,[4,"fi`)
	assert.Equal(t, []any{[]any{1.0, 2.0}, []any{3.0, []any{4.0, "fi"}}}, p.Snapshot())
	_, _ = p.Feed(`ve"]],{"k":[`)
	assert.Equal(t, []any{[]any{1.0, 2.0}, []any{3.0, []any{4.0, "five"}}, map[string]any{"k": []any{}}}, p.Snapshot())
	_, _ = p.Feed(`]}]`)
	assert.True(t, p.Done())
}

func TestParserBigNumberAcrossChunks(t *testing.T) {
	doc := `[` + strings.Repeat("9", 40) + `.5e-10, -0.000001234]`
	want := unmarshal(t, doc)
	for n := 1; n < len(doc); n++ {
		p := NewParser()
		require.NoError(t, feedChunks(p, doc, n))
		require.Equal(t, want, p.Value())
	}
	p := NewParser()
	require.Error(t, feedChunks(p, "["+strings.Repeat("1", maxNumberLen+10), 1000))
}

// FuzzParser checks that the parser never panics and that, for valid JSON
// that encoding/json accepts, the final value is what json.Unmarshal gives,
// whatever the chunking.
func FuzzParser(f *testing.F) {
	for _, d := range validDocs {
		f.Add(d, uint8(1))
		f.Add(d, uint8(3))
	}
	f.Add("Sure:\n```json\n{\"a\":[1,\"x\"]}\n```", uint8(2))
	f.Add(`{"a":[1,2,{"b":"\ud83d\ude00"}]}`, uint8(5))
	f.Add("[\"\xe4\xb8\xad\\u00\"]", uint8(4))
	f.Fuzz(func(t *testing.T, doc string, chunk uint8) {
		n := int(chunk%64) + 1
		for _, mode := range []Mode{EmitComplete, EmitPartial} {
			p := NewParser(WithMode(mode))
			err := feedChunks(p, doc, n)
			_ = p.Snapshot()
			var want any
			if json.Unmarshal([]byte(doc), &want) != nil {
				continue
			}
			if err != nil {
				t.Fatalf("valid doc %q (chunk %d): %v", doc, n, err)
			}
			if !assert.ObjectsAreEqual(want, p.Value()) {
				t.Fatalf("doc %q (chunk %d): got %#v want %#v", doc, n, p.Value(), want)
			}
			ev := p.Events()
			if len(ev) == 0 || !ev[len(ev)-1].Complete || ev[len(ev)-1].Path != "" {
				t.Fatalf("doc %q: missing root event", doc)
			}
		}
	})
}

func TestSyntaxErrorWraps(t *testing.T) {
	p := NewParser()
	err := feedChunks(p, "pre [1, oops", 3)
	var syn *SyntaxError
	assert.True(t, errors.Is(err, ErrNoJSON) || errors.Is(err, ErrIncomplete), err)
	assert.ErrorAs(t, err, &syn)
}
