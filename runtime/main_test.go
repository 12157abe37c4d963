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
	// Helpers this binary starts skip the race runtime's sleep at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}
