package agent_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The session core is protocol-neutral: neither it nor anything it
// imports knows ACP, the editor's runtimes or MCP; those belong to
// agent/acpagent (and the built-in tools to agent/tools).
func TestTheCoreImportsNoProtocol(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/acp-agent/acp-agent/agent").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/acp-agent/acp-agent/acp",
			"github.com/acp-agent/acp-agent/runtime",
			"github.com/acp-agent/acp-agent/agent/mcpclient",
			"github.com/acp-agent/acp-agent/agent/acpagent",
			"github.com/acp-agent/acp-agent/agent/tools",
		} {
			require.False(t, dep == banned || strings.HasPrefix(dep, banned+"/"), "package agent depends on %s", dep)
		}
	}
}
