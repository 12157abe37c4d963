package agent

import (
	"context"
	"slices"
	"strings"
	"time"
)

// This file holds how a session goes on elsewhere or ends: forks
// (Fork, ForkWith), Resume from a saved transcript, Close and Delete.

// ForkableMessage is a user message a fork can start from.
type ForkableMessage struct {
	EntryIndex int    `json:"entryIndex"`
	Text       string `json:"text"`
}

// ForkableUserMessages lists the user messages a fork can start from, in
// transcript order: those with text the user wrote (seed 000 S5). Blank
// and image-only messages and a compaction's summary are not listed, and
// forking from them is refused like any other non-user entry (S20).
func (s *Session) ForkableUserMessages() []ForkableMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ForkableMessage
	for i, e := range s.tr.entries {
		if e.forkable() {
			out = append(out, ForkableMessage{EntryIndex: i, Text: e.Text})
		}
	}
	return out
}

// ForkOptions configure ForkWith.
type ForkOptions struct {
	// ID of the new session; empty means a new random one.
	ID string
	// FromUserEntryIndex, if set, keeps only the entries before that user
	// message.
	FromUserEntryIndex *int
	// Sink of the new session (nil: none).
	Sink UpdateSink
	// Permissions of the new session (nil: nobody to ask).
	Permissions PermissionRequester
	// Workspace of the new session (nil: the fork has no built-in tools).
	Workspace Workspace
	// Journal, if set, makes the fork's journal: it is called with the
	// source's appends held and the number of entries the fork keeps (its
	// first ones), so the journal can copy exactly the records of those.
	Journal func(keptEntries int) (Journal, error)
	// ClientPrompt, if set, is the fork's client system prompt (nil: the
	// source's).
	ClientPrompt *ClientPrompt
}

// Fork returns a new session with its own id, an equal but independent
// transcript (entries are shared, not copied), a copy of the tool
// registry, and no pending state.
func (s *Session) Fork() (*Session, error) { return s.ForkWith(ForkOptions{}) }

// ForkFromUserEntry forks keeping only the context before the user message
// at index; an index that is not a user message gives
// *InvalidForkEntryIndexError and creates nothing.
func (s *Session) ForkFromUserEntry(index int) (*Session, error) {
	return s.ForkWith(ForkOptions{FromUserEntryIndex: &index})
}

// ForkWith forks with options.
func (s *Session) ForkWith(opts ForkOptions) (*Session, error) {
	if opts.Journal != nil {
		// A turn may be appending entries: the journal's copy and the
		// memory copy hold the same entries, or a restart loses the
		// difference.
		s.appendMu.Lock()
		defer s.appendMu.Unlock()
	}
	s.mu.Lock()
	n := len(s.tr.entries)
	if opts.FromUserEntryIndex != nil {
		i := *opts.FromUserEntryIndex
		if i < 0 || i >= n || !s.tr.entries[i].forkable() {
			s.mu.Unlock()
			return nil, &InvalidForkEntryIndexError{Index: i}
		}
		n = i
	}
	tr := s.tr.prefix(n)
	model := s.model
	cfg := s.cfg // under s.mu: SetTitle and the title callbacks change it
	s.mu.Unlock()
	cfg.Title = ForkTitle(cfg.Title)
	var journal Journal
	if opts.Journal != nil {
		j, err := opts.Journal(n)
		if err != nil {
			return nil, err
		}
		journal = j
	}
	cfg.Mode = s.perms.Mode()
	// The fork talks to the model the source talks to now.
	cfg.ModelID, cfg.Model, cfg.ModelName, cfg.ModelInfo, cfg.ReasoningEffort = model.ID, model.Model, model.Name, model.Info, model.ReasoningEffort
	cfg.ID, cfg.Sink, cfg.Tools, cfg.OnDelete = opts.ID, opts.Sink, s.tools.Clone(), nil
	cfg.Permissions, cfg.Workspace = opts.Permissions, opts.Workspace
	if opts.ClientPrompt != nil {
		cfg.ClientPrompt = *opts.ClientPrompt
	}
	if opts.Workspace == nil && s.cfg.Workspace != nil {
		// The cloned registry holds the source's built-ins, bound to the
		// source's workspace.
		for _, t := range s.cfg.Workspace.Tools() {
			cfg.Tools.Unregister(t.Name)
		}
	}
	cfg.Journal = journal
	f := NewSession(cfg)
	f.tr = tr
	f.perms = s.perms.forFork()
	return f, nil
}

// Resume replaces the transcript with entries (a saved snapshot) and, for
// a stored session, rewrites its file to match, so a later session/load
// replays what was resumed. It fails while a turn runs.
func (s *Session) Resume(entries []Entry) error {
	entries = slices.Clone(entries)
	now := time.Now()
	for i := range entries {
		if entries[i].Time.IsZero() {
			entries[i].Time = now // a record's time is required in the file
		}
	}
	if err := s.installEntries(entries); err != nil {
		return err
	}
	s.rewriteFile()
	return nil
}

// installEntries replaces the transcript without touching the file (the
// store installs what it has just read from that file).
func (s *Session) installEntries(entries []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busyLocked() {
		return ErrPromptAlreadyRunning
	}
	var tr transcript
	for _, e := range entries {
		tr.append(e)
	}
	s.tr = tr
	return nil
}

// Close stops accepting input, fails queued messages, lets the running
// turn finish, waits for the worker, and ends the subscribers' streams.
func (s *Session) Close() error {
	s.shutdown(false)
	return nil
}

// Delete closes the session, removes its stored data (SessionConfig.
// OnDelete) and tells the subscribers, whose streams then end.
func (s *Session) Delete() error {
	s.shutdown(true)
	s.mu.Lock()
	first := !s.deleted
	s.deleted = true
	s.mu.Unlock()
	if first && s.cfg.OnDelete != nil {
		return s.cfg.OnDelete()
	}
	return nil
}

func (s *Session) shutdown(deleted bool) {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	queued := s.dropQueuedLocked()
	s.mu.Unlock()
	for _, it := range queued {
		s.complete(it, PromptResult{}, ErrSessionClosed)
	}
	s.worker.Wait()
	if already {
		return
	}
	s.end(ErrSessionClosed)
	if s.cfg.Journal != nil {
		if err := s.cfg.Journal.Close(); err != nil {
			s.log.Warn("closing the session file", "error", err)
		}
	}
	if s.cfg.Workspace != nil {
		if err := s.cfg.Workspace.Close(); err != nil {
			s.log.Warn("closing the workspace", "error", err)
		}
	}
	if deleted {
		s.update(context.Background(), Update{Kind: UpdateDeleted})
	}
	s.closeSubscribers()
}

// forkSuffix marks a fork's title.
const forkSuffix = " (fork)"

// ForkTitle is the title of a fork of a session titled title: the same,
// saying it is a fork, so that session/list does not show two sessions
// alike; a fork of a fork is not marked twice, and an untitled source
// leaves the fork to title itself from its first prompt.
func ForkTitle(title string) string {
	if title == "" || strings.HasSuffix(title, forkSuffix) {
		return title
	}
	return title + forkSuffix
}
