package host_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The host is protocol-neutral: neither it nor anything it imports knows
// ACP or an adapter; a protocol maps onto it from outside.
func TestTheHostImportsNoProtocol(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/acp-agent/acp-agent/agent/host").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/acp-agent/acp-agent/acp",
			"github.com/acp-agent/acp-agent/agent/acpagent",
		} {
			require.False(t, dep == banned || strings.HasPrefix(dep, banned+"/"), "package host depends on %s", dep)
		}
	}
}
