package persistence

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/internal/winetest"
)

// childEnv switches the test binary into one of the child modes below when
// it re-executes itself. Children talk to the parent over their stdout,
// which is a pipe the parent reads; the test process itself never writes
// to stdout.
const childEnv = "PERSISTENCE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

func runChild(mode string) int {
	// Exit when the parent goes away (it holds our stdin open), so a
	// failed test never leaves a writer running.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	dir, id := os.Getenv("CHILD_DIR"), os.Getenv("CHILD_ID")
	var err error
	switch mode {
	case "kill9":
		err = kill9Child(dir, id)
	case "rewrite":
		err = rewriteChild(dir, id)
	case "hold":
		err = holdChild(dir, id)
	case "try":
		err = tryChild(dir, id)
	case "reserve", "release":
		err = reserveChild(dir, id, mode == "release")
	default:
		err = fmt.Errorf("unknown child mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	return 0
}

// holdChild opens session id, says "locked", and keeps it open until the
// parent closes its stdin (the goroutine in runChild then exits).
func holdChild(dir, id string) error {
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	if _, _, err := s.Open(id); err != nil {
		return err
	}
	fmt.Println("locked")
	select {}
}

// tryChild tries to open session id once and prints what happened.
func tryChild(dir, id string) error {
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	f, _, err := s.Open(id)
	switch {
	case err == nil:
		fmt.Println("opened")
		return f.Close()
	case errors.Is(err, ErrLocked):
		fmt.Println("locked:", err)
		return nil
	default:
		return err
	}
}

// child is a running child process of the test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr strings.Builder
}

// startChild re-executes the test binary in mode on session id in dir.
func startChild(t testing.TB, mode, dir, id string, env ...string) *child {
	t.Helper()
	c := &child{}
	require.NoError(t, winetest.Start(t.Logf, func() error {
		c.cmd = exec.Command(os.Args[0], "-test.run=^$")
		c.cmd.Env = append(os.Environ(),
			childEnv+"="+mode, "CHILD_DIR="+dir, "CHILD_ID="+id,
			// The race runtime sleeps 1s at exit by default.
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
		c.cmd.Env = append(c.cmd.Env, env...)
		c.cmd.Stderr = &c.stderr
		var err error
		if c.stdin, err = c.cmd.StdinPipe(); err != nil {
			return err
		}
		out, err := c.cmd.StdoutPipe()
		if err != nil {
			return err
		}
		c.stdout = bufio.NewReader(out)
		return c.cmd.Start()
	}))
	return c
}

// readLine returns the child's next stdout line, failing the test if
// there is none within a generous timeout.
func (c *child) readLine(t testing.TB) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := c.stdout.ReadString('\n')
		ch <- res{strings.TrimSuffix(s, "\n"), err}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err, "child stderr: %s", c.stderr.String())
		return r.s
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-ch
		t.Fatalf("no line from child; stderr: %s", c.stderr.String())
		return ""
	}
}

// wait closes the child's stdin and waits for it to exit.
func (c *child) wait() error {
	c.stdin.Close()
	io.Copy(io.Discard, c.stdout)
	return c.cmd.Wait()
}

// Helpers shared by the tests.

func newStore(t testing.TB) *Store {
	t.Helper()
	return openStore(t, t.TempDir())
}

// openStore opens a Store on dir that the test closes when it ends, as
// an agent does at exit: Close lets go of the Store's entry in
// RunningDir, which Windows cannot delete with its directory (t.TempDir's
// clean-up) while the Store holds it open where deletion waits for the
// last handle (Wine, FAT, network shares; newer NTFS deletes it at once).
func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := OpenStore(dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close(), "closing the store") })
	return s
}

// newFastStore is a store that skips fsync, for tests that open files
// thousands of times and do not test durability.
func newFastStore(t testing.TB) *Store {
	s := newStore(t)
	s.unsafeNoSync = true
	return s
}

func header(id string) Header {
	return Header{ID: id, CWD: "/work/" + id, Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func rec(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"test","seq":%d}`, i))
}

func recs(from, to int) []json.RawMessage {
	out := make([]json.RawMessage, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, rec(i))
	}
	return out
}

// createWith creates session id holding records and closes it.
func createWith(t testing.TB, s *Store, id string, records []json.RawMessage) {
	t.Helper()
	f, err := s.Create(header(id))
	require.NoError(t, err)
	if len(records) > 0 {
		require.NoError(t, f.Append(records...))
	}
	require.NoError(t, f.Close())
}

// load opens session id, returns what was loaded and closes it again.
func load(t testing.TB, s *Store, id string) *Loaded {
	t.Helper()
	f, l, err := s.Open(id)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return l
}

// strs turns records into strings for readable comparisons.
func strs(rs []json.RawMessage) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// dirNames lists the store directory, but for RunningDir, where every
// Store that takes a lock keeps its entry (running_test.go tests it).
func dirNames(t testing.TB, s *Store) []string {
	t.Helper()
	ents, err := os.ReadDir(s.Dir())
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if e.Name() == RunningDir {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

func dataFile(s *Store, id string) string { return filepath.Join(s.Dir(), id+".jsonl") }
