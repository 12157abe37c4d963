package sandbox

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// beforeTests run before the tests (not in the helper), afterTests once
// they have ended (files the tests shared).
var beforeTests, afterTests []func()

func TestMain(m *testing.M) {
	// The test binary doubles as the helper the launcher tests start.
	Main(os.Args)
	for _, f := range beforeTests {
		f()
	}
	// Helpers this binary starts skip the race runtime's sleep at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		for _, f := range afterTests {
			f()
		}
		os.Exit(code)
	}))
}
