package host_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/acp-agent/acp-agent/agent/host"
)

// A first prompt publishes the session's file once, with the title taken
// from the message already in its header: not created and then rewritten
// for the title (a second temporary file, fsync, rename and directory
// fsync before the answer is shown). The renames into the store
// directory are watched with inotify.
func TestFirstPromptPublishesTheSessionFileOnceWithItsTitle(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	h := newHost(t, script(t, says("", "hello there")), dir)
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	defer s.Close()

	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(fd)
	// IN_CREATE too: the kernel merges an event into an identical one
	// queued just before it, and a temporary file's creation comes
	// between two renames to the same name.
	_, err = unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CREATE)
	require.NoError(t, err)

	prompt(t, s, "Fix the build\nplease")
	prompt(t, s, "and the tests")
	published := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			break
		}
		require.NoError(t, err)
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+nameLen], "\x00"))
			if mask := binary.NativeEndian.Uint32(buf[off+4:]); mask&unix.IN_MOVED_TO != 0 && name == s.ID()+".jsonl" {
				published++
			}
			off += unix.SizeofInotifyEvent + nameLen
		}
	}
	assert.Equal(t, 1, published, "the session's file is renamed into place once")
	list, err := h.ListSessions(context.Background(), host.ListRequest{})
	require.NoError(t, err)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, "Fix the build", list.Sessions[0].Title, "its header has the title")
}
