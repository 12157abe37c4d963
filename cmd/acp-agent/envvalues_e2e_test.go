package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// README's flag table: every flag has an environment variable, and a value
// there that the flag would refuse is refused too, naming the variable,
// with exit status 2 before the protocol starts. It used to become the
// default silently (ACP_AGENT_MAX_RETRIES=three gave 2 retries,
// ACP_AGENT_EXECUTION_STATE=on turned execution states off even where the
// config file turned them on). A flag on the command line wins over its
// variable, so the variable is then not looked at.
func TestBadNumbersAndBooleansInTheEnvironmentAreRefused(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"ACP_AGENT_MAX_RETRIES=three", `ACP_AGENT_MAX_RETRIES: "three" is not a whole number`},
		{"ACP_AGENT_MAX_RETRIES=-1", `ACP_AGENT_MAX_RETRIES: "-1" is not a whole number of 0 or more`},
		{"ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES=8MiB", `ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES: "8MiB" is not a positive whole number`},
		{"ACP_AGENT_MAX_RESPONSE_TEXT_BYTES=0", `ACP_AGENT_MAX_RESPONSE_TEXT_BYTES: "0" is not a positive whole number`},
		{"ACP_AGENT_EXECUTION_STATE=on", `ACP_AGENT_EXECUTION_STATE: "on" is not true or false`},
		{"ACP_AGENT_SANDBOX_NETWORK=yes", `ACP_AGENT_SANDBOX_NETWORK: "yes" is not true or false`},
		{"ACP_AGENT_SANDBOX_AUTO_APPROVE=always", `ACP_AGENT_SANDBOX_AUTO_APPROVE: "always" is not true or false`},
		{"ACP_AGENT_PROMPT_TIMEOUT=soon", `ACP_AGENT_PROMPT_TIMEOUT): "soon" is not a duration`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			for _, args := range [][]string{{"--model", "replay/default"}, {"exec", "--model", "replay/default", "hi"}, {"doctor", "--offline", "--model", "replay/default"}} {
				stdout, stderr, code := runBin(t, t.TempDir(), []string{tc.env}, args...)
				assert.Equal(t, exitUsage, code, "%v: stderr: %s", args, stderr)
				assert.Contains(t, stderr, tc.want, "%v", args)
				if args[0] != "doctor" {
					assert.Empty(t, stdout, "%v: stdout is the protocol's (or the answer's)", args)
				}
			}
		})
	}
	t.Run("valid values start", func(t *testing.T) {
		env := []string{"ACP_AGENT_MAX_RETRIES=0", "ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES=1024", "ACP_AGENT_EXECUTION_STATE=1",
			"ACP_AGENT_SANDBOX_NETWORK=false", "ACP_AGENT_SANDBOX_AUTO_APPROVE=true", "ACP_AGENT_MAX_RESPONSE_TEXT_BYTES=4096"}
		_, stderr, code := runBin(t, t.TempDir(), env, "--model", "replay/default")
		assert.Equal(t, 0, code, "stderr: %s", stderr)
	})
	t.Run("the flag wins over its variable", func(t *testing.T) {
		_, stderr, code := runBin(t, t.TempDir(), []string{"ACP_AGENT_MAX_RETRIES=three"}, "--model", "replay/default", "--max-retries", "1")
		assert.Equal(t, 0, code, "stderr: %s", stderr)
	})
	t.Run("a negative --max-retries", func(t *testing.T) {
		_, stderr, code := runBin(t, t.TempDir(), nil, "--model", "replay/default", "--max-retries", "-1")
		assert.Equal(t, exitUsage, code)
		assert.True(t, strings.Contains(stderr, "--max-retries: must not be negative"), "stderr: %s", stderr)
	})
}
