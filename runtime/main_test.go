package runtime

import (
	"os"
	"testing"

	"github.com/acp-agent/acp-agent/runtime/sandbox"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The test binary doubles as the sandbox helper (sandbox tests and
	// benchmarks start it as their command's helper).
	sandbox.Main(os.Args)
	goleak.VerifyTestMain(m)
}
