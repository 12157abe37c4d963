package host

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
)

// recordFixture is testdata/golden/records/display-plan.json, written by
// the ACP adapter's journal before the host took the store over (it
// stored displays and plans as ACP's types): the records it wrote for
// each kind of display and plan, and what it made of records it read
// (decoded, then encoded again), or that it refused them.
type recordFixture struct {
	Written []string `json:"written"`
	Read    []struct {
		In   string `json:"in"`
		Out  string `json:"out"`
		Fail bool   `json:"fail"`
	} `json:"read"`
}

func loadRecordFixture(t *testing.T) recordFixture {
	data, err := os.ReadFile("../../testdata/golden/records/display-plan.json")
	require.NoError(t, err)
	var f recordFixture
	require.NoError(t, json.Unmarshal(data, &f))
	return f
}

// The host's record types write exactly the bytes the ACP types wrote.
func TestRecordsAreWrittenAsBefore(t *testing.T) {
	f := loadRecordFixture(t)
	line := func(n uint32) *uint32 { return &n }
	size := int64(1234)
	old := "old text\n"
	at := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	displays := []*agent.ToolDisplay{
		{Title: "Read a.go", Kind: agent.ToolKindRead, Locations: []agent.Location{{Path: "/w/a.go", Line: line(3)}, {Path: "/w/b.go"}},
			RawInput: json.RawMessage(`{"path":"a.go"}`), Content: []agent.ToolContent{agent.TextContent("hello <b>&</b>\n\u2028")}},
		{Title: "Edit", Kind: agent.ToolKindEdit, Content: []agent.ToolContent{
			{Diff: &agent.Diff{Path: "/w/new.txt", NewText: "new\n"}},
			{Diff: &agent.Diff{Path: "/w/a.txt", OldText: &old, NewText: "new text\n"}},
			{Diff: &agent.Diff{Path: "/w/empty.txt", OldText: new(string), NewText: ""}}}},
		{Title: "Run", Kind: agent.ToolKindExecute, Content: []agent.ToolContent{{TerminalID: "term-1"}, agent.TextContent("")}},
		{Title: "MCP", Kind: agent.ToolKindOther, Content: []agent.ToolContent{
			{Block: &agent.ContentBlock{Type: agent.BlockImage, Data: "iVBORw0=", MIMEType: "image/png"}},
			{Block: &agent.ContentBlock{Type: agent.BlockImage, Data: "iVBORw0=", MIMEType: "image/png", URI: "file:///x.png"}},
			{Block: &agent.ContentBlock{Type: agent.BlockAudio, Data: "UklGRg==", MIMEType: "audio/wav"}},
			{Block: &agent.ContentBlock{Type: agent.BlockResourceLink, URI: "file:///b.txt", Name: "b.txt"}},
			{Block: &agent.ContentBlock{Type: agent.BlockResourceLink, URI: "file:///c.bin", Name: "c", Title: "C", Description: "a file", MIMEType: "application/octet-stream", Size: &size}},
			{Block: &agent.ContentBlock{Type: agent.BlockResource, URI: "file:///a.txt", Text: "alpha"}},
			{Block: &agent.ContentBlock{Type: agent.BlockResource, URI: "file:///a.md", Text: "", MIMEType: "text/markdown"}},
			{}}},
		{Title: "", RawInput: json.RawMessage(`"not json"`)},
		{Title: "No content", Content: []agent.ToolContent{}},
		{Title: "Only nothing", Content: []agent.ToolContent{{}}},
		{Title: "Empty locations", Locations: []agent.Location{}},
	}
	var got []string
	for _, d := range displays {
		e := agent.Entry{Kind: agent.EntryToolOutput, Time: at, ToolCallID: "c1", ToolName: "t", Text: "result", Display: d}
		data, err := json.Marshal(entryRecord(&e))
		require.NoError(t, err)
		got = append(got, string(data))
	}
	plans := []*agent.Plan{
		{Entries: []agent.PlanEntry{{Content: "a", Priority: "high", Status: "pending"}, {Content: "b <&>", Priority: "low", Status: "completed"}}},
		{},
	}
	for _, p := range plans {
		data, err := json.Marshal(record{Type: recPlan, Time: at, Plan: toPlanRecord(p)})
		require.NoError(t, err)
		got = append(got, string(data))
	}
	assert.Equal(t, f.Written, got)
}

// Records read back give the same values, and a record encoded again is
// what the ACP types made of it: what they dropped is dropped, what they
// refused is refused.
func TestRecordsAreReadAsBefore(t *testing.T) {
	f := loadRecordFixture(t)
	for _, line := range f.Written {
		assert.Equal(t, line, reencode(t, line))
	}
	for _, r := range f.Read {
		var rec record
		err := json.Unmarshal([]byte(r.In), &rec)
		if r.Fail {
			assert.Error(t, err, "refused before: %s", r.In)
			continue
		}
		require.NoError(t, err, r.In)
		assert.Equal(t, r.Out, reencode(t, r.In), "read from %s", r.In)
	}
}

// reencode decodes a record and encodes what a session keeps of it.
func reencode(t *testing.T, line string) string {
	var r record
	require.NoError(t, json.Unmarshal([]byte(line), &r))
	var again record
	switch r.Type {
	case recEntry:
		e := r.entry()
		again = entryRecord(&e)
	case recPlan:
		again = record{Type: recPlan, Time: r.Time, Plan: toPlanRecord(r.Plan.plan())}
	}
	data, err := json.Marshal(again)
	require.NoError(t, err)
	return string(data)
}

// The load path's decoder (decodeRecord: segmentio's, into one scratch
// record reused line after line) reads every record as encoding/json
// reads it, keeps nothing of the line before (an image part's data, a
// tool call's arguments), and refuses what encoding/json refuses.
func TestLoadDecoderReadsRecordsAsEncodingJSON(t *testing.T) {
	f := loadRecordFixture(t)
	lines := append([]string{}, f.Written...)
	for _, r := range f.Read {
		lines = append(lines, r.In)
	}
	lines = append(lines,
		`{"type":"entry","time":"2026-01-02T03:04:05Z","kind":"user","content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="},{"type":"text","text":"look"},{"type":"text","text":"again"}]}`,
		`{"type":"entry","time":"2026-01-02T03:04:06Z","kind":"user","content":[{"type":"text","text":"plain"}]}`,
		`{"type":"entry","time":"2026-01-02T03:04:07Z","kind":"tool_calls","toolCalls":[{"id":"a","name":"read_file","arguments":"{\"path\":\"x\"}"},{"id":"b","name":"grep","arguments":"{}"}]}`,
		`{"type":"entry","time":"2026-01-02T03:04:08Z","kind":"tool_calls","toolCalls":[{"id":"c","name":"ls"}]}`,
		`{"type":"entry","time":"2026-01-02T03:04:09Z","kind":"assistant"}`,
		`{"type":"mode","time":"2026-01-02T03:04:10Z","mode":"default","content":[{"type":"text","text":"stray"}]}`,
		`{"type":"entry","time":"2026-01-02T03:04:10Z","kind":"user","content":[{"type":"text","text":"after the mode"}]}`,
		`{"type":"entry","time":"2026-01-02T03:04:11Z","kind":"user","content":[{"type":"text","text":"x"}],"isError":"no"}`,
	)
	encode := func(r *record) string {
		if r.Type == recEntry {
			e := r.entry()
			again := entryRecord(&e)
			r = &again
		}
		data, err := json.Marshal(r)
		require.NoError(t, err)
		return string(data)
	}
	// Compared at the end: what a record kept must not change as the
	// scratch decodes the lines after it.
	type pair struct {
		line      string
		want, got *record
	}
	var read []pair
	scratch := new(record)
	for range 2 { // the second time round, each line follows the last
		for _, line := range lines {
			var std record
			stdErr := json.Unmarshal([]byte(line), &std)
			var d decodedRecord
			err := decodeVia(scratch, []byte(line), &d)
			if stdErr != nil {
				assert.Error(t, err, "encoding/json refuses %s", line)
				continue
			}
			require.NoError(t, err, line)
			got := d.rec
			if got == nil {
				again := entryRecord(&d.entry)
				got = &again
			}
			read = append(read, pair{line, &std, got})
		}
	}
	for _, p := range read {
		assert.Equal(t, encode(p.want), encode(p.got), "read from %s", p.line)
	}
}
