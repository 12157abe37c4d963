package persistence

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	kill9Runs = flag.Int("kill9.runs", 200, "runs of TestKill9LosesNoAcknowledgedEntry (env KILL9_RUNS overrides)")
	kill9Seed = flag.Uint64("kill9.seed", 0, "random seed of TestKill9LosesNoAcknowledgedEntry; 0 picks one")
)

// kill9Record is what the kill -9 writer appends: its payload is checked
// against its length and CRC, so a garbled record cannot pass.
type kill9Record struct {
	Type    string `json:"type"`
	Seq     int    `json:"seq"`
	Len     int    `json:"len"`
	CRC     uint32 `json:"crc"`
	Payload string `json:"payload"`
}

// kill9Alphabet mixes ASCII with multibyte runes and characters JSON must
// escape.
var kill9Alphabet = []rune("abcdefghijklmnopqrstuvwxyz 0123456789\"\\\n\t<>&é日本語🙂\u2028")

// makeKill9Record makes record seq with a payload of random size: mostly
// small, some over PIPE_BUF, and a few from 64 KiB to 320 KiB, sizes at
// which a write(2) can be cut short by SIGKILL, tearing the line. The
// payload repeats a random unit of runes, so that building it, and
// encoding it by hand, stays cheap under the race detector; the CRC still
// covers every byte.
func makeKill9Record(seq int, rng *rand.Rand) json.RawMessage {
	var size int
	switch p := rng.IntN(100); {
	case p < 70:
		size = 1 + rng.IntN(512)
	case p < 95:
		size = 4096 + rng.IntN(8192)
	default:
		size = 64<<10 + rng.IntN(256<<10)
	}
	unit := make([]rune, 1+rng.IntN(48))
	for i := range unit {
		unit[i] = kill9Alphabet[rng.IntN(len(kill9Alphabet))]
	}
	quoted, err := json.Marshal(string(unit))
	if err != nil {
		panic(err)
	}
	k := max(1, size/len(string(unit)))
	payload := strings.Repeat(string(unit), k)
	return json.RawMessage(fmt.Sprintf(`{"type":"kill9","seq":%d,"len":%d,"crc":%d,"payload":"%s"}`,
		seq, len(payload), crc32.ChecksumIEEE([]byte(payload)), strings.Repeat(string(quoted[1:len(quoted)-1]), k)))
}

// kill9Child is the writer: it opens (or creates) the session and appends
// records forever, printing "ack N" only after record N is durable.
func kill9Child(dir, id string) error {
	seed, err := strconv.ParseUint(os.Getenv("CHILD_SEED"), 10, 64)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	seq := 0
	f, l, err := s.Open(id)
	switch {
	case errors.Is(err, ErrNotFound):
		f, err = s.Create(header(id))
	case err == nil:
		seq = len(l.Records)
	}
	if err != nil {
		return err
	}
	fmt.Printf("ready %d\n", seq)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); seq++ {
		if err := f.AppendSync(makeKill9Record(seq, rng)); err != nil {
			return err
		}
		fmt.Printf("ack %d\n", seq)
	}
	return errors.New("writer was not killed within 20s")
}

// TestKill9LosesNoAcknowledgedEntry kills a writer process with SIGKILL at
// random moments and checks, after each kill, that the session holds every
// acknowledged record in order, byte for byte, at most one record more,
// nothing else, and that it can be appended to and reopened. Each session
// is killed several times in a row, so recovery also runs on files that
// were recovered before.
func TestKill9LosesNoAcknowledgedEntry(t *testing.T) {
	t.Parallel() // mostly waits on its writers; overlaps the CPU-bound tests
	runs := *kill9Runs
	if v := os.Getenv("KILL9_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "KILL9_RUNS")
		runs = n
	}
	seed := *kill9Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("%d runs, seed %d (rerun with -args -kill9.seed=%d)", runs, seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	s := newStore(t)

	const killsPerSession = 5
	var torn, extras, acks, early int
	have := 0 // records in the current session after the last check
	for run := 0; run < runs; run++ {
		id := fmt.Sprintf("kill-%04d", run/killsPerSession)
		if run%killsPerSession == 0 {
			have = 0
		}
		acked, killedEarly := kill9Run(t, s, id, rng)
		if killedEarly {
			early++
		}
		acks += max(0, acked+1-have)
		n, tornTail, err := kill9Check(s, id, have, acked, rng)
		if err != nil {
			saved := filepath.Join(os.TempDir(), fmt.Sprintf("persistence-kill9-seed%d-run%d.jsonl", seed, run))
			copyFile(dataFile(s, id), saved)
			t.Fatalf("run %d (session %s, %d records before, last ack %d): %v\nfile saved as %s", run, id, have, acked, err, saved)
		}
		if n < 0 {
			continue // no file yet; the next writer creates it
		}
		if tornTail > 0 {
			torn++
		}
		if n > max(have, acked+1) {
			extras++
		}
		have = n + 1 // kill9Check appended one
	}
	t.Logf("%d kills (%d before the writer was ready), %d acknowledged appends, %d torn tails cut, %d unacknowledged records found",
		runs, early, acks, torn, extras)
}

// kill9Run starts a writer on session id, kills it at a random moment and
// returns the last sequence number it acknowledged (-1 if none).
func kill9Run(t *testing.T, s *Store, id string, rng *rand.Rand) (acked int, early bool) {
	t.Helper()
	c := startChild(t, "kill9", s.Dir(), id, fmt.Sprintf("CHILD_SEED=%d", rng.Uint64()))
	var last atomic.Int64
	last.Store(-1)
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var once sync.Once
		for {
			line, err := c.stdout.ReadString('\n')
			if err != nil {
				return
			}
			verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
			switch verb {
			case "ready":
				once.Do(func() { close(ready) })
			case "ack":
				if n, err := strconv.Atoi(arg); err == nil {
					last.Store(int64(n))
				}
			}
		}
	}()

	if rng.IntN(6) == 0 {
		// Sometimes kill during start-up: Create, or Open's recovery.
		early = true
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	} else {
		select {
		case <-ready:
		case <-done:
		case <-time.After(30 * time.Second):
		}
		time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-done
	c.stdin.Close()
	err := c.cmd.Wait()
	if !diedOfKill(err) {
		t.Fatalf("writer did not die of SIGKILL: %v; stderr: %s", err, c.stderr.String())
	}
	return int(last.Load()), early
}

// kill9Check opens session id after a kill and checks it, then appends one
// record and reopens. have is the number of records before the writer
// started, acked its last acknowledged sequence number. It returns the
// number of records found before its own append, or -1 if the writer died
// before the session file existed.
func kill9Check(s *Store, id string, have, acked int, rng *rand.Rand) (n int, torn int64, err error) {
	want := max(have, acked+1)
	f, l, err := s.Open(id)
	if errors.Is(err, ErrNotFound) && want == 0 {
		return -1, 0, nil // killed before Create published the file
	}
	if err != nil {
		return 0, 0, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	if len(l.Skipped) > 0 {
		return 0, 0, fmt.Errorf("garbage lines: %+v", l.Skipped)
	}
	for i, r := range l.Records {
		var kr kill9Record
		if err := json.Unmarshal(r, &kr); err != nil {
			return 0, 0, fmt.Errorf("record %d: %w", i, err)
		}
		if kr.Seq != i {
			return 0, 0, fmt.Errorf("record %d has seq %d (duplicate or gap)", i, kr.Seq)
		}
		if kr.Len != len(kr.Payload) || kr.CRC != crc32.ChecksumIEEE([]byte(kr.Payload)) {
			return 0, 0, fmt.Errorf("record %d: payload garbled", i)
		}
	}
	n = len(l.Records)
	if n < want {
		return 0, 0, fmt.Errorf("%d records, but %d were acknowledged", n, want)
	}
	if n > want+1 {
		return 0, 0, fmt.Errorf("%d records, at most %d expected (one unacknowledged)", n, want+1)
	}
	if l.TornTail > 0 && !exists(filepath.Join(s.Dir(), id+".jsonl.broken")) {
		return 0, 0, errors.New("torn tail cut without a .broken copy")
	}
	data, err := os.ReadFile(dataFile(s, id))
	if err != nil {
		return 0, 0, err
	}
	if data[len(data)-1] != '\n' {
		return 0, 0, errors.New("file does not end with a newline after recovery")
	}
	for _, name := range dirNamesOf(s.Dir()) {
		if strings.HasPrefix(name, id+".jsonl.tmp") {
			return 0, 0, fmt.Errorf("temporary file %s left after Open", name)
		}
	}

	next := makeKill9Record(n, rng)
	if err := f.AppendSync(next); err != nil {
		return 0, 0, fmt.Errorf("append after recovery: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	f2, l2, err := s.Open(id)
	if err != nil {
		return 0, 0, fmt.Errorf("reopen after append: %w", err)
	}
	defer f2.Close()
	if len(l2.Records) != n+1 || string(l2.Records[n]) != string(next) || l2.TornTail != 0 || len(l2.Skipped) != 0 {
		return 0, 0, fmt.Errorf("after append and reopen: %d records (want %d), torn %d, skipped %d",
			len(l2.Records), n+1, l2.TornTail, len(l2.Skipped))
	}
	return n, l.TornTail, nil
}

func dirNamesOf(dir string) []string {
	ents, _ := os.ReadDir(dir)
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.Name()
	}
	return out
}

func copyFile(src, dst string) {
	if b, err := os.ReadFile(src); err == nil {
		os.WriteFile(dst, b, 0o600)
	}
}
