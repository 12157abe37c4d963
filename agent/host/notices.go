package host

import "github.com/acp-agent/acp-agent/agent"

// Notice is something the user must know about the setup, told in a
// session as a notice update (Config.Notices).
type Notice struct {
	Severity    string // NoticeInfo (default), NoticeWarning or NoticeError
	Title       string
	Description string
	// Minor: a client without notice updates need not hear of it (it
	// goes to the log file, not stderr).
	Minor bool
}

// The severities of a Notice.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// notify tells the user of a session a notice, as a notice update, to a
// client that shows them (Features.Notices). Other clients would show a
// note in the conversation out of place (before the answer of the next
// prompt), so they get none: warnings go to stderr, which editors show as
// the agent's log, and the rest to the log file.
func (s *Session) notify(n Notice) {
	if s.c.Features().Notices {
		sev := n.Severity
		if sev == "" {
			sev = NoticeInfo
		}
		s.post(agent.Update{Kind: agent.UpdateNotice, Notice: &agent.Notice{Severity: sev, Title: n.Title, Description: n.Description}})
		return
	}
	if !n.Minor && (n.Severity == NoticeWarning || n.Severity == NoticeError) {
		s.log.Warn(n.Title, "detail", n.Description)
		return
	}
	s.log.Info(n.Title, "detail", n.Description)
}

// tellSetupNotices tells the setup's notices in the first session that
// starts, once per host.
func (h *Host) tellSetupNotices(s *Session) {
	if h.cfg.Notices == nil {
		return
	}
	h.setupNotices.Do(func() {
		for _, n := range h.cfg.Notices() {
			s.notify(n)
		}
	})
}
