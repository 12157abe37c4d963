package acpagent

import (
	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/host"
)

// The host's types that configure an Agent, under the names Go programs
// embedding the agent have used.
type (
	// ModelChoice is one model sessions can switch between.
	ModelChoice = host.ModelChoice
	// Notice is something the user must know about the setup.
	Notice = host.Notice
)

// InterruptedToolResult is what a load gives a tool call whose result was
// never saved (host.InterruptedToolResult).
const InterruptedToolResult = host.InterruptedToolResult

// Config option ids: the host's options, one to one.
const (
	ConfigOptionMode         = host.OptionMode
	ConfigOptionModel        = host.OptionModel
	ConfigOptionThoughtLevel = host.OptionThoughtLevel
)

// configOptions are the host's options as ACP config options (selects).
func configOptions(opts []host.Option) []acp.SessionConfigOption {
	out := make([]acp.SessionConfigOption, 0, len(opts))
	for _, o := range opts {
		co := acp.SessionConfigOption{ID: acp.SessionConfigId(o.ID), Name: o.Name, Description: o.Description,
			Category: acp.SessionConfigOptionCategory(o.Category),
			Select:   &acp.SessionConfigSelect{CurrentValue: acp.SessionConfigValueId(o.Current)}}
		for _, c := range o.Choices {
			co.Select.Options.Options = append(co.Select.Options.Options, acp.SessionConfigSelectOption{
				Value: acp.SessionConfigValueId(c.Value), Name: c.Name, Description: c.Description})
		}
		out = append(out, co)
	}
	return out
}

// modeState is the modes of a session's new, load or fork response.
func modeState(hs *host.Session) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: acp.SessionModeId(hs.Core().Mode())}
	for _, m := range host.Modes() {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: acp.SessionModeId(m.ID), Name: m.Name, Description: m.Description})
	}
	return st
}

// availableCommands is the available_commands_update of a session's
// commands.
func availableCommands(cmds []host.Command) *acp.AvailableCommandsUpdate {
	u := &acp.AvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{}}
	for _, c := range cmds {
		ac := acp.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: c.Hint}}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	return u
}
