package convention

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testOnly are modules the project keeps for its tests only: the binary
// must not link them. santhosh-tekuri/jsonschema/v5 (a fixed dependency)
// validates every ACP message against the official schemas in tests
// (acp/schemacheck); its package init compiles five meta-schemas, about
// 3 ms and 1 MB of every start, so run-time validation uses
// google/jsonschema-go (agent/internal/jsonvalidate), which the MCP SDK
// links anyway.
// The standard library's image decoders are test-only too: read_file
// needs an image's size only, which agent/tools reads from its header;
// image/png, image/jpeg and image/gif (with zlib and LZW) added their code
// and four package inits to every start.
var testOnly = []string{"github.com/santhosh-tekuri/jsonschema", "image"}

// The production binary, for every release target, links no test-only
// module.
func TestTheBinaryLinksNoTestOnlyModule(t *testing.T) {
	for _, target := range []string{"linux/amd64", "windows/amd64", "darwin/arm64"} {
		t.Run(target, func(t *testing.T) {
			goos, goarch, _ := strings.Cut(target, "/")
			cmd := exec.Command("go", "list", "-deps", "github.com/acp-agent/acp-agent/cmd/acp-agent")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			deps := strings.Fields(string(out))
			require.Contains(t, deps, "github.com/acp-agent/acp-agent/agent", "the listing is the binary's")
			for _, dep := range deps {
				for _, banned := range testOnly {
					assert.False(t, dep == banned || strings.HasPrefix(dep, banned+"/"), "cmd/acp-agent links %s", dep)
				}
			}
		})
	}
}
