package sandbox

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// afterTests run once the tests have ended (files the tests shared).
var afterTests []func()

func TestMain(m *testing.M) {
	// The test binary doubles as the helper the launcher tests start.
	Main(os.Args)
	// Helpers this binary starts skip the race runtime's sleep at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		for _, f := range afterTests {
			f()
		}
		os.Exit(code)
	}))
}
