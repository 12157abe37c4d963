package tools_test

import (
	"testing"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/tools"
)

// BenchmarkBuiltinTools is what every session does with the built-in
// tools: make them on a workspace and register them (each argument
// schema compiled, from the process's cache after the first session).
func BenchmarkBuiltinTools(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		w, err := tools.NewWorkspace(dir, nil, tools.WorkspaceConfig{}, tools.Editor{})
		if err != nil {
			b.Fatal(err)
		}
		reg := agent.NewToolRegistry()
		for _, t := range w.Tools() {
			if err := reg.Register(t); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
}
