package tools_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunCommand(t *testing.T) {
	runChecks(t, "run_command", map[string]string{"sub/x.txt": "x\n"}, []check{
		{name: "output and exit status", args: `{"command":"echo hi"}`, has: []string{"hi\n[exit code 0]"}, title: "`echo hi`"},
		{name: "a failure is an error result", args: `{"command":"echo oops >&2; exit 3"}`, err: true, has: []string{"oops\n[exit code 3]"}},
		{name: "bash, not sh", args: `{"command":"[[ -n $BASH_VERSION ]] && echo bash"}`, has: []string{"bash\n"}},
		{name: "in cwd", args: `{"command":"ls","cwd":"sub"}`, has: []string{"x.txt\n[exit code 0]"}},
		{name: "killed at its timeout", args: `{"command":"sleep 5","timeout_seconds":1}`, err: true, has: []string{"[timed out after 1s; the command was killed]"}},
		{name: "a cwd outside the workspace", args: `{"command":"ls","cwd":"/"}`, err: true, has: []string{"Permission denied"}},
		{name: "a missing cwd", args: `{"command":"ls","cwd":"nope"}`, err: true},
		{name: "an empty command", args: `{"command":""}`, err: true, has: []string{refused, "/command"}},
		{name: "a timeout over a day", args: `{"command":"true","timeout_seconds":86401}`, err: true, has: []string{refused, "/timeout_seconds"}},
	})
}

// A command started in the background is followed and stopped with
// background_command.
func TestBackgroundCommands(t *testing.T) {
	f := newFixture(t, nil)
	check{has: []string{"No background commands."}}.verify(t, f.call("background_command", `{"action":"list"}`))

	// It prints "later" once the test creates the file go.
	line := "echo ready; while [ ! -e go ]; do sleep 0.05; done; echo later; exec sleep 60"
	started := f.call("run_command", `{"command":"`+line+`","background":true}`)
	check{has: []string{"Started " + line + " in the background as bg1", `{"action":"output","id":"bg1"}`},
		title: "In the background: `" + line + "`"}.verify(t, started)
	check{has: []string{"bg1: " + line + " (in .) [bg1 is running"}}.verify(t, f.call("background_command", `{"action":"list"}`))
	writeFile(t, filepath.Join(f.root, "go"), "")
	out := f.call("background_command", `{"action":"output","id":"bg1","wait_seconds":30}`)
	check{has: []string{"later\n[bg1 is running"}, title: "Output of `bg1`"}.verify(t, out)
	assert.Contains(t, started.Text+out.Text, "ready\n", "the output before is read once, by the start or the output call")
	stopped := f.call("background_command", `{"action":"stop","id":"bg1"}`)
	check{has: []string{"[bg1 was killed by SIGTERM]"}, title: "Stop `bg1`"}.verify(t, stopped)
	check{has: []string{"[bg1 was killed by SIGTERM]"}}.verify(t, f.call("background_command", `{"action":"list"}`))
}

func TestBackgroundCommandArguments(t *testing.T) {
	runChecks(t, "background_command", nil, []check{
		{name: "output needs an id", args: `{"action":"output"}`, err: true, has: []string{"output needs the id run_command returned"}},
		{name: "an unknown id", args: `{"action":"stop","id":"bg9"}`, err: true, has: []string{`there is no background command "bg9"`}},
		{name: "an unknown action", args: `{"action":"kill"}`, err: true, has: []string{refused, "/action"}},
		{name: "a wait over a minute", args: `{"action":"output","id":"bg1","wait_seconds":61}`, err: true, has: []string{refused, "/wait_seconds"}},
	})
}
