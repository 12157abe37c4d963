package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/internal/testkit"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/policy"
)

// fixture is a session on a workspace in a temporary directory, on the
// real local filesystem (runtime.LocalFS), in full-access mode so that no
// call waits for a permission: a tool call goes the way the model's does,
// through the argument schema, the tool's description and its run.
type fixture struct {
	t     *testing.T
	root  string
	model *testkit.FakeModel
	s     *agent.Session
	n     int
	sink  *recordingSink
}

// recordingSink keeps the session's updates.
type recordingSink struct {
	mu      sync.Mutex
	updates []agent.Update
}

func (r *recordingSink) Update(_ context.Context, u agent.Update) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
	return nil
}

// plans returns the plans the session showed, in order.
func (f *fixture) plans() []agent.Plan {
	f.sink.mu.Lock()
	defer f.sink.mu.Unlock()
	var out []agent.Plan
	for _, u := range f.sink.updates {
		if u.Kind == agent.UpdatePlan && u.Plan != nil {
			out = append(out, *u.Plan)
		}
	}
	return out
}

// result is what came back of one call: what the model got and how the
// call was shown.
type result struct {
	Text    string
	IsError bool
	Title   string
	Kind    agent.ToolKind
}

// newFixture writes files (path relative to the root → content) and opens
// a session on them; configure adjusts the workspace.
func newFixture(t *testing.T, files map[string]string, configure ...func(*tools.WorkspaceConfig, *tools.Editor)) *fixture {
	t.Helper()
	root := t.TempDir()
	// The real path: a temporary directory may sit behind a symlink.
	root, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content)
	}
	cfg := tools.WorkspaceConfig{EditTools: tools.EditToolsAll, CommandTimeout: 20e9}
	var editor tools.Editor
	for _, f := range configure {
		f(&cfg, &editor)
	}
	w, err := tools.NewWorkspace(root, nil, cfg, editor)
	require.NoError(t, err)
	m := testkit.NewFakeModel()
	sink := &recordingSink{}
	s := agent.NewSession(agent.SessionConfig{CWD: root,
		ModelConfig:  agent.ModelConfig{Model: m, ModelName: "m"},
		ToolConfig:   agent.ToolConfig{Workspace: w, Mode: policy.ModeFullAccess},
		OutputConfig: agent.OutputConfig{Sink: sink}})
	t.Cleanup(func() {
		m.ReleaseAll()
		require.NoError(t, s.Close())
	})
	return &fixture{t: t, root: root, model: m, s: s, sink: sink}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// call makes one call of tool with the raw JSON args, as the model would,
// and returns its result.
func (f *fixture) call(tool, args string) result {
	f.t.Helper()
	f.n++
	id := fmt.Sprint("call", f.n)
	f.model.Push(testkit.Calls(testkit.Call(id, tool, args)), testkit.Says("done"))
	_, err := f.s.Prompt(context.Background(), "go on")
	require.NoError(f.t, err)
	for _, e := range f.s.Transcript() {
		if e.Kind == agent.EntryToolOutput && e.ToolCallID == id {
			r := result{Text: e.Text, IsError: e.IsError}
			if e.Display != nil {
				r.Title, r.Kind = e.Display.Title, e.Display.Kind
			}
			return r
		}
	}
	f.t.Fatalf("no result for %s %s", tool, args)
	return result{}
}

// read returns a file's content under the root ("" and false if missing).
func (f *fixture) read(name string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(f.root, name))
	if err != nil {
		return "", false
	}
	return string(data), true
}

// check is one call of a table: args, and what its result must show.
type check struct {
	name string
	args string
	// err: the call fails (an error result for the model).
	err bool
	// has are substrings of the result's text; title, if set, is the
	// call's title.
	has   []string
	title string
	// files are files (relative to the root) and the content each must
	// have after the call; "<missing>" for none.
	files map[string]string
}

// missing is check.files' value for a file that must not exist.
const missing = "<missing>"

// runChecks makes each check's call on a fresh fixture of files and
// verifies it.
func runChecks(t *testing.T, tool string, files map[string]string, checks []check) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, files)
			c.verify(t, f.call(tool, c.args))
			f.expectFiles(t, c.files)
		})
	}
}

// expectFiles checks that each file has its content (or is missing).
func (f *fixture) expectFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, want := range files {
		got, ok := f.read(name)
		switch {
		case want == missing && ok:
			t.Errorf("%s exists", name)
		case want != missing && !ok:
			t.Errorf("%s does not exist", name)
		case want != missing && got != want:
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// verify checks r against c.
func (c check) verify(t *testing.T, r result) {
	t.Helper()
	if c.err != r.IsError {
		t.Errorf("error result = %v, want %v: %s", r.IsError, c.err, r.Text)
	}
	for _, h := range c.has {
		if !strings.Contains(r.Text, h) {
			t.Errorf("the result does not contain %q:\n%s", h, r.Text)
		}
	}
	if c.title != "" && r.Title != c.title {
		t.Errorf("title = %q, want %q", r.Title, c.title)
	}
}
