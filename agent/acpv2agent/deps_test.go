package acpv2agent_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The v2 adapter only maps ACP v2 onto the host: the store, MCP servers,
// the model providers and the runtimes are the host's, reached through
// its API.
func TestTheV2AdapterImportsOnlyTheHost(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", "github.com/acp-agent/acp-agent/agent/acpv2agent").CombinedOutput()
	require.NoError(t, err, string(out))
	imports := strings.Fields(string(out))
	require.Contains(t, imports, "github.com/acp-agent/acp-agent/agent/host")
	for _, imp := range imports {
		for _, banned := range []string{
			"github.com/acp-agent/acp-agent/persistence",
			"github.com/acp-agent/acp-agent/agent/mcpclient",
			"github.com/acp-agent/acp-agent/runtime",
			"github.com/acp-agent/acp-agent/agent/llm/openai",
			"github.com/acp-agent/acp-agent/agent/llm/anthropic",
			"github.com/acp-agent/acp-agent/agent/llm/replay",
		} {
			require.NotEqual(t, banned, imp, "package acpv2agent imports %s", imp)
		}
	}
}
