package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acp-agent/acp-agent/persistence"
)

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
		return "", fmt.Errorf("%w: title: empty after trimming whitespace", ErrInvalidParams)
	}
	return t, nil
}

// SetTitle sets a session's title as the user gave it, normalized (one
// line, at most 200 characters), which it returns: it goes in the session
// file's header (marked as the user's) before SetTitle returns, and a
// live session stops titling itself.
func (h *Host) SetTitle(_ context.Context, id, title string) (string, error) {
	t, err := normalizeTitle(title)
	if err != nil {
		return "", err
	}
	change := func(hdr *persistence.Header) { hdr.Title, hdr.TitleByUser = t, true }
	if hs := h.live(id); hs != nil {
		if hs.j != nil {
			if err := hs.j.updateHeader(change); errors.Is(err, persistence.ErrClosed) {
				return t, h.updateStored(id, change) // closed meanwhile: it is stored
			} else if err != nil {
				return "", fmt.Errorf("%w: saving the title: %v", ErrInternal, err)
			}
		}
		hs.s.SetTitle(t)
		return t, nil
	}
	return t, h.updateStored(id, change)
}

// The states of a session (Status).
const (
	StatusOpen  = "open"  // live here
	StatusSaved = "saved" // stored, not live here
)

// Status says whether session id is live here or stored, without side
// effects.
func (h *Host) Status(_ context.Context, id string) (string, error) {
	if h.live(id) != nil {
		return StatusOpen, nil
	}
	if h.store != nil && (h.store.Exists(id) || h.store.IsReserved(id)) {
		// A session started and never prompted opens too (empty).
		return StatusSaved, nil
	}
	return "", sessionNotFound(id, "")
}

// Place is where a session works, as LookupSession finds it without
// opening the session.
type Place struct {
	ID                    string
	CWD                   string
	AdditionalDirectories []string
	// ParentSessionID is the session it was forked from or, with
	// Subagent, the session whose subagent it is.
	ParentSessionID string
	Subagent        bool
}

// LookupSession says where session id works, without side effects: the
// live session's directories, else its file's header, else the record
// of a session started and never saved. An unknown id is a not-found
// error. An adapter that confines sessions to some directories (serve)
// asks it before it lets a client touch a session by id.
func (h *Host) LookupSession(id string) (Place, error) {
	if hs := h.live(id); hs != nil {
		pl := Place{ID: id, CWD: hs.s.CWD(), AdditionalDirectories: slices.Clone(hs.extra)}
		if hs.j != nil {
			hdr := hs.j.header()
			pl.ParentSessionID, pl.Subagent = hdr.ParentSessionID, hdr.Subagent
		}
		return pl, nil
	}
	if h.store == nil {
		return Place{}, sessionNotFound(id, "")
	}
	if sum, err := h.store.Summary(id); err == nil {
		return Place{ID: id, CWD: sum.CWD, AdditionalDirectories: sum.AdditionalDirectories,
			ParentSessionID: sum.ParentSessionID, Subagent: sum.Subagent}, nil
	} else if !errors.Is(err, persistence.ErrNotFound) {
		return Place{}, sessionNotFound(id, "")
	}
	if hdr, _, err := h.store.Reserved(id); err == nil {
		return Place{ID: id, CWD: hdr.CWD, AdditionalDirectories: hdr.AdditionalDirectories}, nil
	}
	return Place{}, sessionNotFound(id, "")
}

// lockedError answers a request that found session id's file locked
// (err): here (by this host's store), another request is closing,
// deleting or opening it, and for this request it is not there;
// otherwise another process has it open (LockedError).
func (h *Host) lockedError(id string, here bool, err error) error {
	if here {
		return sessionNotFound(id, "another request is closing, deleting or opening it; try again")
	}
	return &LockedError{ID: id, Err: err}
}

// untilUnlocked calls try (which opens or deletes session id's file) and
// says whether a lock it met is held here: a lock another request here
// let go between try and the question is not taken for another
// process's; try runs again then (at most 3 times).
func (h *Host) untilUnlocked(id string, try func() error) (here bool, err error) {
	for range 3 {
		if err = try(); !errors.Is(err, persistence.ErrLocked) {
			return false, err
		}
		if h.store.Holds(id) {
			return true, err
		}
	}
	return false, err
}

// Archive sets whether a session is archived; the state is kept in the
// header of the session's file.
func (h *Host) Archive(_ context.Context, id string, archived bool) error {
	change := func(hdr *persistence.Header) { hdr.Archived = archived }
	if hs := h.live(id); hs != nil && hs.j != nil {
		if err := hs.j.updateHeader(change); errors.Is(err, persistence.ErrClosed) {
			return h.updateStored(id, change) // closed meanwhile: it is stored
		} else if err != nil {
			return fmt.Errorf("%w: saving the session: %v", ErrInternal, err)
		}
		return nil
	}
	return h.updateStored(id, change)
}

// updateStored changes the header of a stored session that is not open
// here.
func (h *Host) updateStored(id string, change func(*persistence.Header)) error {
	if h.store == nil || !h.store.Exists(id) {
		return sessionNotFound(id, "")
	}
	var f *persistence.File
	here, err := h.untilUnlocked(id, func() (err error) { f, _, err = h.store.Open(id); return err })
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		return sessionNotFound(id, "")
	case errors.Is(err, persistence.ErrLocked):
		return h.lockedError(id, here, err)
	case err != nil:
		return fmt.Errorf("%w: reading session %s: %v", ErrInternal, id, err)
	}
	defer f.Close()
	hdr := f.Header()
	change(&hdr)
	if err := f.RewriteHeader(hdr); err != nil {
		return fmt.Errorf("%w: saving session %s: %v", ErrInternal, id, err)
	}
	return nil
}
