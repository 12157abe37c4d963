package persistence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// golden is a session file built through the store, with the offsets of
// its lines.
type golden struct {
	data    []byte
	records []json.RawMessage
	ends    []int // ends[0] is the header's end, ends[i] record i-1's
}

// buildGolden writes session id with records through s and reads it back.
func buildGolden(t *testing.T, s *Store, id string, records []json.RawMessage) golden {
	t.Helper()
	createWith(t, s, id, records)
	data, err := os.ReadFile(dataFile(s, id))
	require.NoError(t, err)
	g := golden{data: data, records: records}
	for i, c := range data {
		if c == '\n' {
			g.ends = append(g.ends, i+1)
		}
	}
	require.Len(t, g.ends, len(records)+1)
	return g
}

// smallRecord is a record of 30 to 80 bytes with some multibyte text.
func smallRecord(i int, rng *rand.Rand) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "msg", "seq": i, "text": strings.Repeat("hé日", rng.IntN(8))})
	return b
}

// bigRecord is a record of size bytes, over 1 MiB in these tests. Its
// payload has no '}', so every torn prefix of it fails fast.
func bigRecord(i, size int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"big","seq":%d,"text":"%s"}`, i, strings.Repeat("x", size)))
}

// TestOpenAfterTruncationAtEveryOffset cuts a file of 53 records, one of
// them over 1 MiB, at every byte offset of its header and small lines, at a
// dense sample of offsets inside the big line (every 64 KiB boundary and
// the bytes around it included) and at a sample of those after it, plus
// every line boundary and its neighbours. At each offset Open must return
// exactly the complete lines of the prefix, cut the rest after saving a
// .broken copy, and leave a file that takes an append and reopens with it.
// (Offsets past the big line cost a 1 MiB validation each, several times
// that under the race detector, hence the sampling there.)
func TestOpenAfterTruncationAtEveryOffset(t *testing.T) {
	t.Parallel()
	s := newFastStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var records []json.RawMessage
	for i := range 50 {
		records = append(records, smallRecord(i, rng))
	}
	records = append(records, bigRecord(50, 1<<20+12345), rec(51), rec(52))
	g := buildGolden(t, s, "cut", records) // checkPrefix rewrites this file
	bigStart, bigEnd := g.ends[50], g.ends[51]

	// offsets maps each offset to check to whether to also append and
	// reopen there.
	offsets := map[int]bool{}
	for k := 0; k < bigStart+256; k++ { // header, small lines, start of the big line
		offsets[k] = true
	}
	for k := bigStart; k < bigEnd; k += 16381 { // inside the big line: a dense sample...
		offsets[k] = true
	}
	for k := 64 << 10; k < bigEnd; k += 64 << 10 { // ...and every read-size boundary
		offsets[k-1], offsets[k], offsets[k+1] = true, true, true
	}
	for k := bigEnd; k <= len(g.data); k += 4 { // after it, a sample
		offsets[k] = false
	}
	for _, e := range g.ends { // every line boundary and its neighbours
		offsets[e-2], offsets[e-1], offsets[e] = true, true, true
		offsets[min(e+1, len(g.data))] = true
	}

	checked := 0
	for k := range len(g.data) + 1 {
		reopen, ok := offsets[k]
		if !ok {
			continue
		}
		checked++
		if err := checkPrefix(s, g, k, reopen); err != nil {
			t.Fatalf("prefix of %d bytes: %v", k, err)
		}
	}
	t.Logf("checked %d of %d offsets", checked, len(g.data)+1)
}

// checkPrefix writes the first k bytes of g as session "cut" and checks
// Open and the .broken copy, and with reopen an append and reopen.
func checkPrefix(s *Store, g golden, k int, reopen bool) error {
	const id = "cut"
	path := dataFile(s, id)
	broken := path + ".broken"
	os.Remove(broken)
	if err := os.WriteFile(path, g.data[:k], 0o600); err != nil {
		return err
	}
	f, l, err := s.Open(id)
	if k < g.ends[0] {
		if !errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("header cut: got %v, want ErrCorrupt", err)
		}
		if exists(broken) {
			return errors.New("a cut header produced a .broken copy")
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	n, good := 0, g.ends[0] // complete records in the prefix, and where they end
	for n < len(g.records) && g.ends[n+1] <= k {
		n++
		good = g.ends[n]
	}
	switch {
	case len(l.Records) != n:
		return fmt.Errorf("%d records, want %d", len(l.Records), n)
	case len(l.Skipped) != 0:
		return fmt.Errorf("skipped %+v", l.Skipped)
	case l.TornTail != int64(k-good):
		return fmt.Errorf("torn tail %d, want %d", l.TornTail, k-good)
	case exists(broken) != (k > good):
		return fmt.Errorf(".broken exists: %v, want %v", exists(broken), k > good)
	}
	for i := range n {
		if !bytes.Equal(l.Records[i], g.records[i]) {
			return fmt.Errorf("record %d differs", i)
		}
	}
	if k > good {
		b, err := os.ReadFile(broken)
		if err != nil || !bytes.Equal(b, g.data[:k]) {
			return fmt.Errorf(".broken is not the original file (%v)", err)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(good) {
		return fmt.Errorf("file not truncated to %d bytes (%v)", good, err)
	}
	if !reopen {
		return nil
	}
	extra := json.RawMessage(`{"type":"after"}`)
	if err := f.Append(extra); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	f2, l2, err := s.Open(id)
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer f2.Close()
	if len(l2.Records) != n+1 || !bytes.Equal(l2.Records[n], extra) || l2.TornTail != 0 || len(l2.Skipped) != 0 {
		return fmt.Errorf("after append: %d records, torn %d, skipped %d", len(l2.Records), l2.TornTail, len(l2.Skipped))
	}
	return nil
}

// TestOpenCutsGarbageTail checks what Open keeps and cuts when the file
// ends in the kinds of garbage a crash or a bad disk leaves: the last line
// is torn whenever it has no newline or is not a JSON object, and only it
// is cut.
func TestOpenCutsGarbageTail(t *testing.T) {
	base := recs(0, 5)
	noise := make([]byte, 300)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range noise {
		if noise[i] = byte(rng.UintN(256)); noise[i] == '\n' {
			noise[i] = 'n'
		}
	}
	tests := []struct {
		name     string
		tail     string
		wantRecs int // records Open returns
		wantCut  int // bytes of tail cut
		wantSkip int
	}{
		{"zeroed sector", strings.Repeat("\x00", 512), 5, 512, 0},
		{"random bytes", string(noise), 5, len(noise), 0},
		{"complete object without newline", `{"type":"x"}`, 5, 12, 0},
		{"half an object", `{"type":"x","te`, 5, 15, 0},
		{"invalid last line with newline", "garbage\n", 5, 8, 0},
		{"array as last line", "[1,2]\n", 5, 6, 0},
		{"zeros then newline", "\x00\x00\x00\n", 5, 4, 0},
		{"good line then zeros", `{"type":"y"}` + "\n\x00\x00", 6, 2, 0},
		{"bad line then good line: only skipped", "garbage\n" + `{"type":"y"}` + "\n", 6, 0, 1},
		{"blank line then torn line", "\n{\"ty", 5, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFastStore(t)
			createWith(t, s, "g", base)
			path := dataFile(s, "g")
			orig, err := os.ReadFile(path)
			require.NoError(t, err)
			data := append(orig, tt.tail...)
			require.NoError(t, os.WriteFile(path, data, 0o600))

			f, l, err := s.Open("g")
			require.NoError(t, err)
			defer f.Close()
			assert.Len(t, l.Records, tt.wantRecs)
			assert.Equal(t, int64(tt.wantCut), l.TornTail)
			assert.Len(t, l.Skipped, tt.wantSkip)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Len(t, got, len(data)-tt.wantCut)
			assert.Equal(t, tt.wantCut > 0, exists(path+".broken"))
			require.NoError(t, f.AppendSync(rec(99)))
			require.NoError(t, f.Close())
			l2 := load(t, s, "g")
			assert.Len(t, l2.Records, tt.wantRecs+1)
			assert.Zero(t, l2.TornTail)
		})
	}
}

// TestCorruptMiddleLineCostsOnlyItself damages each record line of a
// 50-record file in turn, in several ways. A damaged middle line is
// skipped and reported, every other record is kept, and the line stays in
// the file across an append and reopen; a damaged last line is a torn tail
// and is cut instead.
func TestCorruptMiddleLineCostsOnlyItself(t *testing.T) {
	const n = 50
	damage := []struct {
		name string
		line string
	}{
		{"invalid JSON", `{"type":"test","seq":`},
		{"array", `[1,2,3]`},
		{"number", `42`},
		{"string", `"text"`},
		{"empty", ``},
		{"whitespace", "  \t "},
		{"NUL bytes", "\x00\x00\x00\x00"},
		{"two objects", `{"a":1}{"b":2}`},
	}
	s := newFastStore(t)
	g := buildGolden(t, s, "m", recs(0, n))
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			for k := range n {
				start, end := g.ends[k], g.ends[k+1]
				data := bytes.Join([][]byte{g.data[:start], []byte(d.line), []byte("\n"), g.data[end:]}, nil)
				require.NoError(t, os.WriteFile(dataFile(s, "m"), data, 0o600))
				os.Remove(dataFile(s, "m") + ".broken")

				f, l, err := s.Open("m")
				require.NoError(t, err, "line %d", k)
				want := append(append([]json.RawMessage{}, g.records[:k]...), g.records[k+1:]...)
				require.Equal(t, strs(want), strs(l.Records), "damaged record %d", k)
				if k == n-1 {
					assert.Empty(t, l.Skipped, "last line is torn, not skipped")
					assert.Equal(t, int64(len(d.line)+1), l.TornTail)
				} else {
					require.Len(t, l.Skipped, 1, "record %d", k)
					assert.Equal(t, k+2, l.Skipped[0].Line)
					assert.Equal(t, int64(start), l.Skipped[0].Offset)
					assert.Error(t, l.Skipped[0].Err)
					assert.Zero(t, l.TornTail)
				}
				require.NoError(t, f.Append(rec(1000)))
				require.NoError(t, f.Close())
				l2 := load(t, s, "m")
				assert.Equal(t, strs(append(want, rec(1000))), strs(l2.Records))
				assert.Equal(t, len(l.Skipped), len(l2.Skipped), "the skipped line stays in the file")
			}
		})
	}
}

// TestOpenRejectsUnreadableHeader covers the header cases that are
// ErrCorrupt; the file is left untouched.
func TestOpenRejectsUnreadableHeader(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"empty file", ""},
		{"no newline", `{"type":"session","version":1,"id":"h"}`},
		{"not JSON", "garbage\n"},
		{"JSON array", "[]\n"},
		{"wrong type", `{"type":"message","version":1,"id":"h"}` + "\n"},
		{"newer version", `{"type":"session","version":2,"id":"h"}` + "\n"},
		{"version zero", `{"type":"session","version":0,"id":"h"}` + "\n"},
		{"other session's id", `{"type":"session","version":1,"id":"other"}` + "\n"},
		{"invalid id", `{"type":"session","version":1,"id":"../h"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFastStore(t)
			path := dataFile(s, "h")
			require.NoError(t, os.WriteFile(path, []byte(tt.data), 0o600))
			_, _, err := s.Open("h")
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Contains(t, err.Error(), path, "the error names the file")
			got, _ := os.ReadFile(path)
			assert.Equal(t, tt.data, string(got))
			assert.False(t, exists(path+".broken"))
			// The lock was released: the session can be opened again.
			_, _, err = s.Open("h")
			assert.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

// TestOpenRemovesStaleTemporaryFiles: a temporary file left by a process
// that died before its rename is deleted by the next lock holder, and
// another session's temporary files are not touched.
func TestOpenRemovesStaleTemporaryFiles(t *testing.T) {
	s := newFastStore(t)
	createWith(t, s, "a", recs(0, 2))
	stale := filepath.Join(s.Dir(), "a.jsonl.tmp12345")
	other := filepath.Join(s.Dir(), "a.jsonl.tmp1.x.jsonl.tmp678") // temp of session "a.jsonl.tmp1.x"
	require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o600))
	require.NoError(t, os.WriteFile(other, []byte("partial"), 0o600))
	l := load(t, s, "a")
	assert.Len(t, l.Records, 2)
	assert.False(t, exists(stale))
	assert.True(t, exists(other))
}

// TestOpenRefusesFileOverSizeLimit: a (sparse) file over MaxFileSize is
// refused before anything is allocated for it, and left as it is.
func TestOpenRefusesFileOverSizeLimit(t *testing.T) {
	s := newFastStore(t)
	createWith(t, s, "huge", recs(0, 1))
	path := dataFile(s, "huge")
	require.NoError(t, os.Truncate(path, MaxFileSize+1))
	_, _, err := s.Open("huge")
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(MaxFileSize+1), fi.Size())
	assert.False(t, exists(path+".broken"))
}
