package acphttp

import (
	"sort"
	"time"
)

// Stats are the transport's counters: totals, and each open connection's
// with its sessions' (what /healthz shows an authorized caller).
type Stats struct {
	Connections      int         `json:"connections"`
	ConnectionsTotal int64       `json:"connectionsTotal"`
	OpenStreams      int64       `json:"openStreams"`
	MessagesOut      int64       `json:"messagesOut"`
	Resumes          int64       `json:"resumes"`
	Drops            int64       `json:"drops"`
	Refused          int64       `json:"refused"`
	Open             []ConnStats `json:"open"`
}

// ConnStats are one connection's counters.
type ConnStats struct {
	ID          string        `json:"id"`
	Transport   string        `json:"transport"`
	Opened      time.Time     `json:"opened"`
	OpenStreams int           `json:"openStreams"`
	MessagesIn  int64         `json:"messagesIn"`
	BytesIn     int64         `json:"bytesIn"`
	MessagesOut int64         `json:"messagesOut"`
	BytesOut    int64         `json:"bytesOut"`
	Resumes     int64         `json:"resumes"`
	Drops       int64         `json:"drops"`
	Sessions    []StreamStats `json:"sessions,omitempty"`
}

// StreamStats are one session's counters on a connection.
type StreamStats struct {
	SessionID        string `json:"sessionId"`
	Messages         int64  `json:"messages"`
	Bytes            int64  `json:"bytes"`
	Resumes          int64  `json:"resumes,omitempty"`
	Drops            int64  `json:"drops,omitempty"`
	PendingBytes     int    `json:"pendingBytes,omitempty"`
	RetainedMessages int    `json:"retainedMessages,omitempty"`
	Receiver         bool   `json:"receiver,omitempty"`
	Dropped          bool   `json:"dropped,omitempty"`
}

// Stats returns the current counters.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	conns := make([]conn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	st := Stats{Connections: len(conns), ConnectionsTotal: h.stats.connectionsTotal.Load(),
		OpenStreams: h.stats.streamsOpen.Load(), MessagesOut: h.stats.messagesOut.Load(),
		Resumes: h.stats.resumes.Load(), Drops: h.stats.drops.Load(), Refused: h.stats.refused.Load()}
	for _, c := range conns {
		st.Open = append(st.Open, c.snapshot())
	}
	sort.Slice(st.Open, func(i, j int) bool { return st.Open[i].Opened.Before(st.Open[j].Opened) })
	return st
}
