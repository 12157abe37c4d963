package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoShowsTheCodingTaskAndTheReload runs what `make demo` runs, the
// demo client against a freshly built agent, and checks the job was done
// (the edit is on disk, shown as a diff before its approval, the test run
// passed) and that the restarted agent's session/load brought the session
// and its /cost back. Piped output has no colour codes.
func TestDemoShowsTheCodingTaskAndTheReload(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "acp-agent")
	build := exec.Command("go", "build", "-o", bin, "../acp-agent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the agent: %v\n%s", err, out)
	}
	ws := filepath.Join(t.TempDir(), "project")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	if err := run(ctx, &out, []string{"-agent", bin, "-workspace", ws}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	text := out.String()
	t.Logf("the demo took %s", time.Since(start).Round(time.Millisecond))
	data, err := os.ReadFile(filepath.Join(ws, "calc.go"))
	if err != nil || !strings.Contains(string(data), "return a + b") {
		t.Errorf("the fix is not in calc.go (%v):\n%s", err, data)
	}
	if strings.Contains(text, "```") {
		t.Errorf("a tool output's code block is shown with its fences on the terminal:\n%s", text)
	}
	task, reload, ok := strings.Cut(text, "== The agent restarts; session/load replays the session ==")
	if !ok {
		t.Fatalf("no reload section:\n%s", text)
	}
	perm := strings.Index(task, "? permission: Edit `calc.go`")
	diff := strings.Index(task, "-\treturn a - b\n    +\treturn a + b")
	allowed := strings.Index(task, "→ allowed once")
	if perm < 0 || diff < perm || allowed < diff {
		t.Errorf("the edit's diff is not shown between its permission question and its approval:\n%s", task)
	}
	for _, want := range []string{"== You ==\nThe tests fail", "plan:\n  [~] Read the code and its test", "▶ Read `calc.go` (read)", "▶ `go test ./...` (execute)", "ok  \tdemo", "[exit code 0]", "agent: Fixed:", "context: "} {
		if !strings.Contains(task, want) {
			t.Errorf("the task lacks %q:\n%s", want, task)
		}
	}
	if !strings.Contains(reload, "▶ Edit `calc.go` (edit)\n  ✓\n") || !strings.Contains(reload, "-\treturn a - b\n    +\treturn a + b") || strings.Contains(reload, "as shown above") {
		t.Errorf("the replayed edit shows its diff (nothing was shown above it in the reload):\n%s", reload)
	}
	for _, want := range []string{"you: The tests fail", "▶ Edit `calc.go`", "plan:\n  [x] Read the code and its test\n  [x] Fix the bug\n  [x] Run the tests", "ok  \tdemo", "== /cost after the restart ==", "✓ the same usage, the same cost"} {
		if !strings.Contains(reload, want) {
			t.Errorf("the reload lacks %q:\n%s", want, reload)
		}
	}
	costs := strings.Count(text, "Token: 7,485 in / 249 out | Cache: 5,184 read / 0 write (69% hit) | Cost: N/A")
	if costs != 2 {
		t.Errorf("/cost is not the same before and after the restart (%d matches):\n%s", costs, text)
	}
	if strings.Contains(text, "\033[") {
		t.Errorf("colour codes in piped output:\n%q", text)
	}
}

// With -color always (a terminal), the diff is coloured; NO_COLOR wins
// over auto.
func TestDemoColours(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter(&b, true, "/")
	if got := p.green("+x"); got != "\033[32m+x\033[0m" {
		t.Errorf("green: %q", got)
	}
	t.Setenv("NO_COLOR", "1")
	if useColor(os.Stdout, "auto") {
		t.Error("NO_COLOR is set: no colour")
	}
	if !useColor(&b, "always") || useColor(&b, "auto") {
		t.Error("always colours; auto does not colour a buffer")
	}
}
