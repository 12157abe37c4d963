package persistence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRec is what the decoders of these tests decode a record into.
type testRec struct {
	Type string `json:"type"`
	Seq  int    `json:"seq"`
}

// decodeStd decodes with encoding/json, which rejects what is not JSON
// with a *json.SyntaxError.
func decodeStd(rec []byte, v *testRec) error { return json.Unmarshal(rec, v) }

// errWrongShape is the error of decodeHasty.
var errWrongShape = errors.New("wrong shape")

// decodeHasty gives up at a "seq" that is not a number without looking at
// the rest of the line, as a fast decoder may: a line that is not JSON
// then fails with an error that is not a syntax error.
func decodeHasty(rec []byte, v *testRec) error {
	if bytes.Contains(rec, []byte(`"seq":"`)) {
		return errWrongShape
	}
	return json.Unmarshal(rec, v)
}

// openBoth writes data as session id and opens it with Open, then writes
// it again and opens it with OpenDecoded, and checks that both read the
// same: records, skipped lines, torn tail and what is left on disk; and
// that each decoded value is its record decoded.
func openBoth(t *testing.T, s *Store, id string, data []byte, decode func([]byte, *testRec) error) (*Loaded, *Decoded[testRec]) {
	t.Helper()
	open := func(dec bool) (*Loaded, *Decoded[testRec], []byte) {
		require.NoError(t, os.WriteFile(dataFile(s, id), data, 0o600))
		os.Remove(dataFile(s, id) + ".broken")
		var f *File
		var l *Loaded
		var d *Decoded[testRec]
		var err error
		if dec {
			f, l, d, err = OpenDecoded(s, id, decode)
		} else {
			f, l, err = s.Open(id)
		}
		require.NoError(t, err)
		require.NoError(t, f.Close())
		left, err := os.ReadFile(dataFile(s, id))
		require.NoError(t, err)
		return l, d, left
	}
	want, _, wantLeft := open(false)
	got, d, gotLeft := open(true)
	require.Equal(t, strs(want.Records), strs(got.Records))
	require.Equal(t, want.TornTail, got.TornTail)
	require.Equal(t, len(want.Skipped), len(got.Skipped))
	for i := range want.Skipped {
		require.Equal(t, want.Skipped[i].Line, got.Skipped[i].Line)
		require.Equal(t, want.Skipped[i].Offset, got.Skipped[i].Offset)
	}
	require.Equal(t, wantLeft, gotLeft)
	require.Len(t, d.Values, len(got.Records))
	require.Len(t, d.Errs, len(got.Records))
	for i, r := range got.Records {
		var v testRec
		err := decode(r, &v)
		require.Equal(t, err, d.Errs[i], "record %d", i)
		require.Equal(t, v, d.Values[i], "record %d", i)
	}
	// Streamed: every record once, in order, as Decoded holds it, with
	// where its line starts.
	require.NoError(t, os.WriteFile(dataFile(s, id), data, 0o600))
	os.Remove(dataFile(s, id) + ".broken")
	var streamed []testRec
	f, l, _, err := OpenDecodedStream(s, id, decode, Stream[testRec]{Record: func(i int, off int64, v *testRec, err error) {
		require.Equal(t, len(streamed), i)
		require.Equal(t, d.Errs[i], err, "record %d", i)
		require.True(t, bytes.HasPrefix(bytes.TrimLeft(data[off:], " \t\r"), got.Records[i]), "record %d at %d", i, off)
		streamed = append(streamed, *v)
	}})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, strs(got.Records), strs(l.Records))
	if len(streamed) > 0 || len(d.Values) > 0 {
		require.Equal(t, d.Values, streamed)
	}
	return got, d
}

// TestOpenDecodedStreamGivesRecordsBeforeTheDecodeEnds: the first records
// reach Stream.Record while the last line is still being decoded. The
// decoder of the last line waits for the first record to be streamed, so
// a stream that began only after the decode would never see it.
func TestOpenDecodedStreamGivesRecordsBeforeTheDecodeEnds(t *testing.T) {
	t.Parallel()
	s := newFastStore(t)
	const n = 3 * orderedBatch
	buildGolden(t, s, "s", recs(0, n))
	first := make(chan struct{})
	var early bool
	decode := func(rec []byte, v *testRec) error {
		if err := json.Unmarshal(rec, v); err != nil || v.Seq != n-1 {
			return err
		}
		select {
		case <-first:
			early = true
		case <-time.After(10 * time.Second):
		}
		return nil
	}
	var opened Header
	f, l, d, err := OpenDecodedStream(s, "s", decode, Stream[testRec]{
		Opened: func(h Header, data []byte, headerEnd int64) error {
			opened = h
			require.Equal(t, byte('\n'), data[headerEnd-1])
			return nil
		},
		Record: func(i int, _ int64, _ *testRec, _ error) {
			if i == 0 {
				close(first)
			}
		}})
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, l.Records, n)
	require.Equal(t, n-1, d.Values[n-1].Seq)
	require.Equal(t, "s", opened.ID)
	require.True(t, early, "the first record was streamed only after the last line was decoded")
}

// TestOpenDecodedStreamOpenedErrorLeavesTheFile: an error from
// Stream.Opened is returned as it is, before any record is decoded, and
// the session is not held.
func TestOpenDecodedStreamOpenedErrorLeavesTheFile(t *testing.T) {
	t.Parallel()
	s := newFastStore(t)
	g := buildGolden(t, s, "o", recs(0, 10))
	stop := errors.New("no workspace")
	decoded := 0
	_, _, _, err := OpenDecodedStream(s, "o", func(rec []byte, v *testRec) error { decoded++; return json.Unmarshal(rec, v) },
		Stream[testRec]{Opened: func(Header, []byte, int64) error { return stop }})
	require.Same(t, stop, err)
	require.Zero(t, decoded)
	left, err := os.ReadFile(dataFile(s, "o"))
	require.NoError(t, err)
	require.Equal(t, g.data, left)
	f, _, err := s.Open("o")
	require.NoError(t, err, "the lock was given back")
	require.NoError(t, f.Close())
}

// TestOpenDecodedReadsWhatOpenReads: decoding while scanning keeps Open's
// rules. A file long enough to be decoded on several goroutines is cut at
// every offset of its last lines, and has each kind of bad line put in
// its middle and at its end; OpenDecoded must read what Open reads, with
// every record decoded in order, also with a decoder that stops at the
// first field of the wrong shape.
func TestOpenDecodedReadsWhatOpenReads(t *testing.T) {
	t.Parallel()
	s := newFastStore(t)
	const n = 2100 // several decoding goroutines (scan splits from 1,024 lines each)
	g := buildGolden(t, s, "d", recs(0, n))

	t.Run("cut at every offset of the last lines", func(t *testing.T) {
		for k := g.ends[n-3] - 1; k <= len(g.data); k++ {
			l, _ := openBoth(t, s, "d", g.data[:k], decodeStd)
			require.GreaterOrEqual(t, len(l.Records), n-4, "cut at %d", k)
		}
	})

	damage := []string{
		`{"type":"test","seq":`, `[1,2,3]`, `42`, ``, "\x00\x00", `{"a":1}{"b":2}`,
		`{"type":"test","seq":"7"}`,             // JSON of the wrong shape: a record, with an error
		`{"type":"test","seq":"7","x":[1,2,}`,   // not JSON, though a hasty decoder sees the wrong shape first
		`{"type":"test","seq":"7"} {"seq":"8"}`, // two objects
	}
	for _, line := range damage {
		for _, at := range []int{n / 2, n - 1} {
			t.Run(fmt.Sprintf("%q at record %d", line, at), func(t *testing.T) {
				start, end := g.ends[at], g.ends[at+1]
				data := bytes.Join([][]byte{g.data[:start], []byte(line), []byte("\n"), g.data[end:]}, nil)
				for _, decode := range []func([]byte, *testRec) error{decodeStd, decodeHasty} {
					l, d := openBoth(t, s, "d", data, decode)
					wrongShape := json.Valid([]byte(line)) && bytes.HasPrefix([]byte(line), []byte("{"))
					if !wrongShape {
						require.Len(t, l.Records, n-1)
						continue
					}
					require.Len(t, l.Records, n)
					assert.Error(t, d.Errs[at], "the record of the wrong shape")
					if at+1 < n {
						assert.Equal(t, testRec{Type: "test", Seq: at + 1}, d.Values[at+1], "the record after it")
					}
				}
			})
		}
	}
}
