//go:build linux

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// The agent and a helper talk over a Unix stream socketpair in frames: a
// 4-byte big-endian length, then one JSON message. File descriptors (the
// command's stdin, stdout, stderr and optional cgroup) ride on the first
// byte of a start frame as SCM_RIGHTS. Both ends use blocking raw
// syscalls from one reader goroutine and serialise writers.

// message is every frame, both ways. Agent to helper: Op "start" (with
// Req, the descriptors, and NoMounts when masks by mount are off) or
// "signal" (Sig, for the command ID names) or "warm" (Req: a request
// whose Policy's writable roots the helper lists the secrets files under
// now, ahead of the first command; no answer). Helper to agent, for command
// ID: Pid once started (with Masks when the denied paths were masked by
// mount), Err if it could not start, Exit (a raw wait status) once it
// ended and everything it left behind was killed.
type message struct {
	Op       string   `json:"op,omitempty"`
	ID       uint64   `json:"id"`
	Req      *Request `json:"req,omitempty"`
	NoMounts bool     `json:"noMounts,omitempty"`
	Sig      int      `json:"sig,omitempty"`
	Pid      int      `json:"pid,omitempty"`
	Masks    bool     `json:"masks,omitempty"`
	Err      string   `json:"err,omitempty"`
	Exit     *int     `json:"exit,omitempty"`
}

const (
	// maxFrame bounds one message; argv and environment are bounded by
	// the kernel's ARG_MAX long before this.
	maxFrame = 16 << 20
	// maxFDs is the most descriptors one frame carries.
	maxFDs = 4
)

var errFrame = errors.New("sandbox helper: malformed frame")

func writeFrame(fd int, m message, fds []int) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(data) > maxFrame {
		return fmt.Errorf("sandbox request of %d bytes is over the %d-byte limit", len(data), maxFrame)
	}
	buf := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(buf, uint32(len(data)))
	copy(buf[4:], data)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for len(buf) > 0 {
		n, err := unix.SendmsgN(fd, buf, oob, nil, unix.MSG_NOSIGNAL)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sandbox helper: send: %w", err)
		}
		buf, oob = buf[n:], nil
	}
	return nil
}

// readFrame reads one message into m and returns the descriptors that
// came with it (close-on-exec; the caller owns them, also on error). A
// clean end of stream is io.EOF.
func readFrame(fd int, m *message) ([]int, error) {
	var hdr [4]byte
	oob := make([]byte, unix.CmsgSpace(4*maxFDs))
	var n, oobn, flags int
	var err error
	for {
		n, oobn, flags, _, err = unix.Recvmsg(fd, hdr[:], oob, unix.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox helper: receive: %w", err)
	}
	if n == 0 {
		return nil, io.EOF
	}
	fds, ferr := parseRights(oob[:oobn])
	if ferr != nil || flags&unix.MSG_CTRUNC != 0 {
		return fds, errFrame
	}
	if err := readFull(fd, hdr[n:]); err != nil {
		return fds, err
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxFrame {
		return fds, errFrame
	}
	body := make([]byte, size)
	if err := readFull(fd, body); err != nil {
		return fds, err
	}
	if err := json.Unmarshal(body, m); err != nil {
		return fds, fmt.Errorf("%w: %v", errFrame, err)
	}
	return fds, nil
}

func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, cm := range msgs {
		r, err := unix.ParseUnixRights(&cm)
		if err != nil {
			continue
		}
		fds = append(fds, r...)
	}
	return fds, nil
}

func readFull(fd int, buf []byte) error {
	for len(buf) > 0 {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sandbox helper: receive: %w", err)
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		buf = buf[n:]
	}
	return nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}
