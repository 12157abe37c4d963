package acpagent_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The adapter only maps ACP onto the host: the store, MCP servers and the
// model providers are the host's, reached through its API.
func TestTheAdapterImportsOnlyTheHost(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", "github.com/acp-agent/acp-agent/agent/acpagent").CombinedOutput()
	require.NoError(t, err, string(out))
	imports := strings.Fields(string(out))
	require.Contains(t, imports, "github.com/acp-agent/acp-agent/agent/host")
	for _, imp := range imports {
		for _, banned := range []string{
			"github.com/acp-agent/acp-agent/persistence",
			"github.com/acp-agent/acp-agent/agent/mcpclient",
			"github.com/acp-agent/acp-agent/agent/llm/openai",
			"github.com/acp-agent/acp-agent/agent/llm/anthropic",
			"github.com/acp-agent/acp-agent/agent/llm/replay",
		} {
			require.NotEqual(t, banned, imp, "package acpagent imports %s", imp)
		}
	}
}
