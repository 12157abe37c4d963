package acpagent

import "github.com/acp-agent/acp-agent/acp"

// Notice is something the user must know about the agent's setup, told in
// a session as a notice update (Config.Notices).
type Notice struct {
	Severity    acp.NoticeSeverity
	Title       string
	Description string
}

// notify tells the user of a session a notice: as a notice update to a
// client that supports them (clientCapabilities.session.notices), else as
// a note in the conversation, which every client shows.
func (as *acpSession) notify(n Notice) {
	caps := as.conn.Capabilities()
	if caps.Session != nil && caps.Session.Notices != nil {
		sev := n.Severity
		if sev == "" {
			sev = acp.NoticeSeverityInfo
		}
		as.post(acp.SessionUpdate{Notice: &acp.Notice{Severity: sev, Title: n.Title, Description: n.Description}})
		return
	}
	text := "Note: " + n.Title
	if n.Description != "" {
		text += ": " + n.Description
	}
	as.post(acp.AgentMessageChunk(text + "\n\n"))
}

// tellSetupNotices tells the setup's notices in the first session that
// starts, once per agent.
func (a *Agent) tellSetupNotices(as *acpSession) {
	if a.cfg.Notices == nil {
		return
	}
	a.setupNotices.Do(func() {
		for _, n := range a.cfg.Notices() {
			as.notify(n)
		}
	})
}

// authMethodName names the authentication method advertised while no
// session can start: what the user has to do.
func (a *Agent) authMethodName() string {
	if a.cfg.SetupError != nil {
		return "Fix the config file"
	}
	return "Configure a model"
}
