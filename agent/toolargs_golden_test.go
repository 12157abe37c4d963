package agent_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/internal/testkit"
)

// update rewrites the golden files: go test ./agent -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// An MCP-style schema (what zod-to-json-schema emits): nested objects,
// arrays of objects, enums, no extra properties.
const issueSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
 "properties":{
  "title":{"type":"string","minLength":1},
  "state":{"type":"string","enum":["open","closed"]},
  "labels":{"type":"array","items":{"type":"string"},"maxItems":2},
  "assignee":{"type":"object","properties":{"login":{"type":"string"},"id":{"type":"integer","minimum":1}},"required":["login"],"additionalProperties":false},
  "tasks":{"type":"array","items":{"type":"object","properties":{"done":{"type":"boolean"},"text":{"type":"string"}},"required":["text"]}},
  "due":{"type":"string","format":"date"},
  "ref":{"$ref":"#/definitions/ref"}},
 "required":["title","state"],
 "additionalProperties":false,
 "definitions":{"ref":{"anyOf":[{"type":"integer"},{"type":"string","pattern":"^#[0-9]+$"}]}}}`

// The error result a model gets for bad arguments names each failing
// argument by its JSON Pointer and says why, so the model can fix the
// call; pinned as a golden file per case (one JSON object, case → text).
func TestBadToolArgumentsNameEachProblemGolden(t *testing.T) {
	cases := []struct{ name, args string }{
		{"missing required", `{"title":"x"}`},
		{"wrong type", `{"title":7,"state":"open"}`},
		{"enum", `{"title":"x","state":"pending"}`},
		{"nested object", `{"title":"x","state":"open","assignee":{"id":0}}`},
		{"array item", `{"title":"x","state":"open","tasks":[{"text":"a"},{"done":"yes"}]}`},
		{"additional properties", `{"title":"x","state":"open","body":"b","milestone":3}`},
		{"nested additional property", `{"title":"x","state":"open","assignee":{"login":"a","email":"a@b"}}`},
		{"several at once", `{"title":"","state":"new","labels":["a",2,"c"],"tasks":[{}],"extra":true}`},
		{"format", `{"title":"x","state":"open","due":"tomorrow"}`},
		{"reference to definitions, anyOf", `{"title":"x","state":"open","ref":"12"}`},
	}
	got := map[string]string{}
	for _, c := range cases {
		rt, m, _ := callOnce(t, "create_issue", issueSchema, c.args)
		require.Empty(t, rt.Calls(), "%s: the tool must not run", c.name)
		last := m.Request(t, 1).Messages
		got[c.name] = last[len(last)-1].Text()
	}
	b, err := json.Marshal(got)
	require.NoError(t, err)
	testkit.JSONGolden(t, filepath.Join("..", "testdata", "golden", "toolargs", "errors.json"), b, *update)
}
