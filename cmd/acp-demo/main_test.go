package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoRunsACompleteExchange runs what `make demo` runs: the demo
// client against a freshly built agent with the offline replay model.
func TestDemoRunsACompleteExchange(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "acp-agent")
	build := exec.Command("go", "build", "-o", bin, "../acp-agent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the agent: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, []string{"-agent", bin, "-prompt", "hi"}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{"connected to acp-agent", "session ", "you: hi", "thinking: ", "agent: ", "offline replay model", "stopReason: end_turn"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
