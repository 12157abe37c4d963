package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A PowerShell or cmd.exe line is not parsed: it is risky (the allow
// policy asks, command lists refuse it), and an allow_always of it
// covers exactly that line in that directory, nothing near it.
func TestUnparsedLinesAskAndAreRememberedExactly(t *testing.T) {
	line := `Get-ChildItem -Recurse | Select-String "TODO"`
	cl, err := UnparsedCommandLine(line, "PowerShell")
	require.NoError(t, err)
	assert.True(t, cl.Unparsed)
	assert.Empty(t, cl.Commands)
	require.NotEmpty(t, cl.Risks, "an unparsed line always carries a risk")

	assert.Equal(t, Ask, Decide(ModeDefault, PolicyAsk, ActionExecute, DecisionNone, true), "default mode asks")
	assert.Equal(t, Ask, Decide(ModeAcceptEdits, PolicyAllow, ActionExecute, DecisionNone, true), "the allow policy asks about risky lines")
	assert.Equal(t, Allow, Decide(ModeFullAccess, PolicyAsk, ActionExecute, DecisionNone, true), "full access does not ask")

	err = Terminal{DeniedCommands: []string{"rm"}}.Check(cl)
	assert.Error(t, err, "a deny list cannot be checked against a line nobody parsed")
	assert.NoError(t, Terminal{}.Check(cl), "without lists, nothing to check")

	ctx := CommandContext{Dir: `C:\work\repo`}
	name, ok := DescribeApproval(cl, ctx, ".")
	require.True(t, ok, "an exact-line approval is offered")
	assert.Contains(t, name, "exactly")
	assert.Contains(t, name, line)

	var m CommandMemory
	assert.Equal(t, DecisionNone, m.Lookup(cl, ctx))
	stored := m.Remember(cl, ctx, DecisionAllow)
	require.Equal(t, []Approval{{Kind: ApprovalLine, Dir: ctx.Dir, Line: line}}, stored)
	assert.Equal(t, DecisionAllow, m.Lookup(cl, ctx))
	for _, other := range []string{line + " ", `Get-ChildItem -Recurse | Select-String "FIXME"`, "Get-ChildItem", line + "; Remove-Item -Recurse C:\\"} {
		ol, err := UnparsedCommandLine(other, "PowerShell")
		require.NoError(t, err)
		assert.Equal(t, DecisionNone, m.Lookup(ol, ctx), "%q is not the approved line", other)
	}
	assert.Equal(t, DecisionNone, m.Lookup(cl, CommandContext{Dir: `C:\work\other`}), "another folder is not covered")

	var restored CommandMemory
	restored.Restore(stored, DecisionAllow)
	assert.Equal(t, DecisionAllow, restored.Lookup(cl, ctx), "a reloaded session keeps the exact approval")

	m.Remember(cl, ctx, DecisionReject)
	assert.Equal(t, DecisionReject, m.Lookup(cl, ctx), "reject_always wins")
}

// What the user approves is what runs: lines that would display
// differently are refused before anyone is asked.
func TestUnparsedLinesRefuseWhatWouldDisplayDifferently(t *testing.T) {
	for name, line := range map[string]string{
		"empty":     "  ",
		"NUL":       "dir\x00 C:\\",
		"control":   "echo a\rRemove-Item x",
		"invisible": "echo safe\u202e",
		"bad UTF-8": "echo \xff",
	} {
		_, err := UnparsedCommandLine(line, "PowerShell")
		assert.ErrorIs(t, err, ErrCommandParse, name)
	}
}
