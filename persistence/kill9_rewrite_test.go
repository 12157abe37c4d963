package persistence

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// generation is the content of a file after Rewrite number gen: a header
// titled "gen N" and N+1 records, each naming the generation, so a file
// mixing two generations cannot pass.
func generation(gen int) (string, []json.RawMessage) {
	recs := make([]json.RawMessage, gen+1)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"type":"gen","gen":%d,"i":%d,"pad":"%s"}`, gen, i, strings.Repeat("x", 100*(i%7))))
	}
	return fmt.Sprintf("gen %d", gen), recs
}

// rewriteChild rewrites the session over and over, as compaction does,
// printing "ack N" once the file holds generation N.
func rewriteChild(dir, id string) error {
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	f, _, err := s.Open(id)
	if errors.Is(err, ErrNotFound) {
		f, err = s.Create(header(id))
	}
	if err != nil {
		return err
	}
	fmt.Println("ready")
	for gen := 0; gen < 100_000; gen++ {
		title, recs := generation(gen % 40)
		h := f.Header()
		h.Title = title
		if err := f.Rewrite(h, recs); err != nil {
			return err
		}
		fmt.Printf("ack %d\n", gen%40)
	}
	return errors.New("rewriter was not killed")
}

// Issue 7: a kill during compaction (a Rewrite) never leaves a broken
// file: after SIGKILL at a random moment the session opens cleanly and
// holds exactly one whole generation, never a mix, and no temporary file
// survives the next open.
func TestKill9DuringRewriteLeavesTheOldOrTheNewFile(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for run := range 40 {
		id := fmt.Sprintf("rewrite-%02d", run%4)
		c := startChild(t, "rewrite", s.Dir(), id)
		require.Equal(t, "ready", c.readLine(t))
		acked := -1
		deadline := time.Now().Add(time.Duration(1+rng.IntN(20)) * time.Millisecond)
		for time.Now().Before(deadline) {
			verb, arg, _ := strings.Cut(c.readLine(t), " ")
			if verb == "ack" {
				acked, _ = strconv.Atoi(arg)
			}
		}
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
		// The acknowledgements written before the kill are the truth:
		// read them all (the pipe ends when the child is gone).
		for {
			line, err := c.stdout.ReadString('\n')
			if verb, arg, _ := strings.Cut(strings.TrimSpace(line), " "); verb == "ack" {
				acked, _ = strconv.Atoi(arg)
			}
			if err != nil {
				break
			}
		}
		c.stdin.Close()
		var ee *exec.ExitError
		if err := c.cmd.Wait(); !errors.As(err, &ee) {
			t.Fatalf("rewriter did not die of SIGKILL: %v; stderr: %s", err, c.stderr.String())
		}

		f, l, err := s.Open(id)
		require.NoError(t, err, "run %d: the file must open after a kill mid-rewrite", run)
		require.Empty(t, l.Skipped, "run %d", run)
		require.Zero(t, l.TornTail, "run %d: a rewrite is never torn", run)
		var gen int
		_, err = fmt.Sscanf(l.Header.Title, "gen %d", &gen)
		if acked >= 0 {
			require.NoError(t, err, "run %d: header %+v", run, l.Header)
		}
		if err == nil {
			_, want := generation(gen)
			require.Len(t, l.Records, len(want), "run %d: generation %d is whole", run, gen)
			for i, r := range l.Records {
				require.JSONEq(t, string(want[i]), string(r), "run %d: record %d of generation %d", run, i, gen)
			}
			require.Contains(t, []int{acked, (acked + 1) % 40}, gen, "run %d: the acknowledged generation or the one being written", run)
		}
		require.NoError(t, f.Close())
		temps, _ := filepath.Glob(filepath.Join(s.Dir(), id+tempInfix+"*"))
		require.Empty(t, temps, "run %d: temporary files survive the next open", run)
	}
}
