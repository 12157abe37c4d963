package acpagent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/persistence"
)

var _ acp.SessionManager = (*Agent)(nil)

// maxTitleRunes caps a title the user sets.
const maxTitleRunes = 200

// normalizeTitle makes a title one line of at most maxTitleRunes runes,
// whitespace runs folded to one space; an empty one is invalid.
func normalizeTitle(title string) (string, error) {
	t := strings.Join(strings.Fields(title), " ")
	if r := []rune(t); len(r) > maxTitleRunes {
		t = strings.TrimSpace(string(r[:maxTitleRunes]))
	}
	if t == "" {
		return "", fmt.Errorf("%w: title: empty after trimming whitespace", acp.ErrInvalidParams)
	}
	return t, nil
}

// live returns the session with id if it is open here.
func (a *Agent) live(id acp.SessionId) *acpSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// SetSessionTitle implements acp.SessionManager: the title goes in the
// session file's header (marked as the user's) before the answer, and a
// live session stops titling itself.
func (a *Agent) SetSessionTitle(_ context.Context, id acp.SessionId, title string) (string, error) {
	t, err := normalizeTitle(title)
	if err != nil {
		return "", err
	}
	change := func(h *persistence.Header) { h.Title, h.TitleByUser = t, true }
	if as := a.live(id); as != nil {
		if as.j != nil {
			if err := as.j.updateHeader(change); errors.Is(err, persistence.ErrClosed) {
				return t, a.updateStored(id, change) // closed meanwhile: it is stored
			} else if err != nil {
				return "", fmt.Errorf("%w: saving the title: %v", acp.ErrInternal, err)
			}
		}
		as.s.SetTitle(t)
		return t, nil
	}
	return t, a.updateStored(id, change)
}

// SessionStatus implements acp.SessionManager, without side effects.
func (a *Agent) SessionStatus(_ context.Context, id acp.SessionId) (string, error) {
	if a.live(id) != nil {
		return acp.SessionStatusOpen, nil
	}
	if a.store != nil && a.store.Exists(id) {
		return acp.SessionStatusSaved, nil
	}
	return "", acp.SessionNotFound(id, "")
}

// lockedError answers a request that found session id's file locked
// (err): here (by this agent's store), another request is closing,
// deleting or opening it, and for this request it is not there (-32002);
// otherwise another process has it open (sessionLockedError).
func (a *Agent) lockedError(id string, here bool, err error) error {
	if here {
		return acp.SessionNotFound(id, "another request is closing, deleting or opening it; try again")
	}
	return sessionLockedError(id, err)
}

// untilUnlocked calls try (which opens or deletes session id's file) and
// says whether a lock it met is held here: a lock another request here
// let go between try and the question is not taken for another
// process's; try runs again then (at most 3 times).
func (a *Agent) untilUnlocked(id string, try func() error) (here bool, err error) {
	for range 3 {
		if err = try(); !errors.Is(err, persistence.ErrLocked) {
			return false, err
		}
		if a.store.Holds(id) {
			return true, err
		}
	}
	return false, err
}

// ArchiveSession implements acp.SessionManager: the state is kept in the
// header of the session's file.
func (a *Agent) ArchiveSession(_ context.Context, id acp.SessionId, archived bool) error {
	change := func(h *persistence.Header) { h.Archived = archived }
	if as := a.live(id); as != nil && as.j != nil {
		if err := as.j.updateHeader(change); errors.Is(err, persistence.ErrClosed) {
			return a.updateStored(id, change) // closed meanwhile: it is stored
		} else if err != nil {
			return fmt.Errorf("%w: saving the session: %v", acp.ErrInternal, err)
		}
		return nil
	}
	return a.updateStored(id, change)
}

// updateStored changes the header of a stored session that is not open
// here.
func (a *Agent) updateStored(id acp.SessionId, change func(*persistence.Header)) error {
	if a.store == nil || !a.store.Exists(id) {
		return acp.SessionNotFound(id, "")
	}
	var f *persistence.File
	here, err := a.untilUnlocked(id, func() (err error) { f, _, err = a.store.Open(id); return err })
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		return acp.SessionNotFound(id, "")
	case errors.Is(err, persistence.ErrLocked):
		return a.lockedError(id, here, err)
	case err != nil:
		return fmt.Errorf("%w: reading session %s: %v", acp.ErrInternal, id, err)
	}
	defer f.Close()
	h := f.Header()
	change(&h)
	if err := f.RewriteHeader(h); err != nil {
		return fmt.Errorf("%w: saving session %s: %v", acp.ErrInternal, id, err)
	}
	return nil
}
