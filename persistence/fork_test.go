package persistence

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sizedRec is record i with a payload that is sometimes over 64 KiB.
func sizedRec(i int) json.RawMessage {
	size := 20
	if i%37 == 5 {
		size = 70 << 10
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"r","seq":%d,"pad":"%s"}`, i, strings.Repeat("x", size)))
}

// TestForkDuringAppendsIsExactlyThePrefix forks a session five times while
// a goroutine keeps appending to it. Each fork holds exactly the first n
// records, n being Count at the fork; appends to a fork do not reach the
// source, and the source keeps every record it was given.
func TestForkDuringAppendsIsExactlyThePrefix(t *testing.T) {
	s := newStore(t)
	src, err := s.Create(header("src"))
	require.NoError(t, err)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := src.Append(sizedRec(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})

	forkN := map[string]int{}
	for j := range 5 {
		for src.Count() < (j+1)*40 {
			time.Sleep(100 * time.Microsecond)
		}
		id := fmt.Sprintf("fork%d", j)
		n := src.Count()
		h := Header{ID: id, CWD: "/elsewhere", ParentSessionID: "src", Title: "fork"}
		fk, err := s.Fork(src, h, n)
		require.NoError(t, err)
		assert.Equal(t, n, fk.Count())
		assert.Equal(t, "src", fk.Header().ParentSessionID)
		require.NoError(t, fk.AppendSync(json.RawMessage(`{"type":"fork-only"}`)))
		assert.Equal(t, n+1, fk.Count())
		require.NoError(t, fk.Close())
		forkN[id] = n
	}
	close(stop)
	wg.Wait()
	total := src.Count()
	require.NoError(t, src.Close())

	ls := load(t, s, "src")
	require.Len(t, ls.Records, total)
	for i, r := range ls.Records {
		require.Equal(t, string(sizedRec(i)), string(r), "source record %d", i)
	}
	for id, n := range forkN {
		lf := load(t, s, id)
		assert.Equal(t, "/elsewhere", lf.Header.CWD)
		require.Len(t, lf.Records, n+1, id)
		assert.Equal(t, strs(ls.Records[:n]), strs(lf.Records[:n]), id)
		assert.Equal(t, `{"type":"fork-only"}`, string(lf.Records[n]))
	}
}

// TestForkLeavesSkippedLinesOutAndChains forks a session with bad middle
// lines (they are not copied), then forks the fork at every length after
// appending to it, which checks the record offsets a fork computes.
func TestForkLeavesSkippedLinesOutAndChains(t *testing.T) {
	s := newStore(t)
	createWith(t, s, "bad", nil)
	path := dataFile(s, "bad")
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	for _, line := range []string{string(rec(0)), "garbage", string(rec(1)), "[]", "", string(rec(2)), string(rec(3))} {
		fh.WriteString(line + "\n")
	}
	require.NoError(t, fh.Close())

	src, l, err := s.Open("bad")
	require.NoError(t, err)
	require.Len(t, l.Skipped, 3)
	require.Equal(t, 4, src.Count())
	defer src.Close()

	for n := 0; n <= 4; n++ {
		id := fmt.Sprintf("f%d", n)
		fk, err := s.Fork(src, header(id), n)
		require.NoError(t, err)
		require.NoError(t, fk.Append(rec(10), rec(11)))
		// Fork the fork at every length: its offsets must be right.
		for m := 0; m <= fk.Count(); m++ {
			id2 := fmt.Sprintf("%s-%d", id, m)
			fk2, err := s.Fork(fk, header(id2), m)
			require.NoError(t, err)
			require.NoError(t, fk2.Close())
			want := append(recs(0, n), rec(10), rec(11))[:m]
			l2 := load(t, s, id2)
			assert.Equal(t, strs(want), strs(l2.Records), id2)
			assert.Empty(t, l2.Skipped)
		}
		require.NoError(t, fk.Close())
		lf := load(t, s, id)
		assert.Equal(t, strs(append(recs(0, n), rec(10), rec(11))), strs(lf.Records))
		assert.Empty(t, lf.Skipped, "skipped lines are not copied")
	}
}

func TestForkRejectsBadArguments(t *testing.T) {
	s := newStore(t)
	createWith(t, s, "exists", nil)
	src, err := s.Create(header("src"))
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, src.Append(recs(0, 3)...))

	tests := []struct {
		name string
		h    Header
		n    int
		is   error
	}{
		{"negative n", header("f1"), -1, nil},
		{"n over Count", header("f2"), 4, nil},
		{"existing id", header("exists"), 1, fs.ErrExist},
		{"onto itself", header("src"), 1, nil},
		{"invalid id", Header{ID: "a/b"}, 1, ErrInvalidID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Fork(src, tt.h, tt.n)
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
	assert.ElementsMatch(t, []string{"exists.jsonl", "exists.lock", "src.jsonl", "src.lock"}, dirNames(t, s),
		"failed forks leave nothing behind")
	assert.Equal(t, 3, src.Count())
}
