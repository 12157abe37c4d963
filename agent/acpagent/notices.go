package acpagent

import "github.com/acp-agent/acp-agent/acp"

// Notice is something the user must know about the agent's setup, told in
// a session as a notice update (Config.Notices).
type Notice struct {
	Severity    acp.NoticeSeverity
	Title       string
	Description string
	// Minor: a client without notice updates need not hear of it (it
	// goes to the log file, not stderr).
	Minor bool
}

// notify tells the user of a session a notice, as a notice update, to a
// client that supports them (clientCapabilities.session.notices). Other
// clients would show a note in the conversation out of place (before the
// answer of the next prompt), so they get none: warnings go to stderr,
// which editors show as the agent's log, and the rest to the log file.
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
	if !n.Minor && (n.Severity == acp.NoticeSeverityWarning || n.Severity == acp.NoticeSeverityError) {
		as.log.Warn(n.Title, "detail", n.Description)
		return
	}
	as.log.Info(n.Title, "detail", n.Description)
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
