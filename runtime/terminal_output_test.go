package runtime

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestTailBufferKeepsTheLastBytes(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{"empty", 4, nil, "", false},
		{"under the limit", 8, []string{"ab", "cd"}, "abcd", false},
		{"exactly the limit", 4, []string{"ab", "cd"}, "abcd", false},
		{"wraps", 4, []string{"abc", "def"}, "cdef", true},
		{"one write over the limit", 4, []string{"abcdefgh"}, "efgh", true},
		{"many small writes", 3, []string{"a", "b", "c", "d", "e"}, "cde", true},
		{"big write after wrap", 4, []string{"abc", "de", "fghij"}, "ghij", true},
		{"cut lands inside a rune", 4, []string{"xé€"}, "€", true},
		{"incomplete trailing rune is held back", 8, []string{"ab\xe2\x82"}, "ab", false},
		{"invalid bytes are kept", 8, []string{"a\xffb"}, "a\xffb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTailBuffer(tt.limit)
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			got, truncated := b.snapshot()
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.truncated, truncated)
		})
	}
}

// Random multibyte streams cut into random writes: the snapshot is always
// valid UTF-8, within the limit, a suffix of the stream, and at most
// utf8.UTFMax-1 bytes shorter than the limit.
func TestTailBufferRandomMultibyteStreamsStayValid(t *testing.T) {
	runes := []rune{'a', 'é', '€', '😀', '\n', 'ß', '中'}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var stream strings.Builder
		for n := rng.IntN(400); n > 0; n-- {
			stream.WriteRune(runes[rng.IntN(len(runes))])
		}
		s := stream.String()
		limit := 1 + rng.IntN(64)
		b := newTailBuffer(limit)
		for rest := []byte(s); len(rest) > 0; {
			k := 1 + rng.IntN(len(rest))
			_, _ = b.Write(rest[:k])
			rest = rest[k:]
		}
		got, truncated := b.snapshot()
		require.True(t, utf8.ValidString(got), "stream %q limit %d: %q", s, limit, got)
		require.LessOrEqual(t, len(got), limit)
		require.True(t, strings.HasSuffix(s, got))
		require.Equal(t, len(s) > limit, truncated)
		if truncated {
			require.GreaterOrEqual(t, len(got), limit-(utf8.UTFMax-1))
		} else {
			require.Equal(t, s, got)
		}
	}
}

func TestTailBufferMemoryIsBoundedByTheLimit(t *testing.T) {
	b := newTailBuffer(1000)
	chunk := bytes.Repeat([]byte("x"), 777)
	for range 10_000 {
		_, _ = b.Write(chunk)
	}
	require.LessOrEqual(t, cap(b.buf), 64<<10)
	got, truncated := b.snapshot()
	require.True(t, truncated)
	require.Len(t, got, 1000)
}

// TestTailBufferSinceReadsEachByteOnce: reading from the offset the last
// read returned yields every byte once; bytes the limit dropped before a
// read are counted, not invented; a rune split across writes waits for
// its end.
func TestTailBufferSinceReadsEachByteOnce(t *testing.T) {
	b := newTailBuffer(8)
	b.Write([]byte("abc"))
	out, next, dropped := b.since(0)
	require.Equal(t, "abc", out)
	require.EqualValues(t, 3, next)
	require.Zero(t, dropped)
	out, next, _ = b.since(next)
	require.Empty(t, out, "nothing new")
	require.EqualValues(t, 3, next)

	b.Write([]byte("de\xc3")) // "é" split across writes
	out, next, _ = b.since(next)
	require.Equal(t, "de", out, "the incomplete rune is held back")
	b.Write([]byte("\xa9f"))
	out, next, _ = b.since(next)
	require.Equal(t, "éf", out)
	require.EqualValues(t, 8, next)

	b.Write([]byte("0123456789")) // more than the limit: "01" is lost
	out, next, dropped = b.since(next)
	require.Equal(t, "23456789", out)
	require.EqualValues(t, 2, dropped)
	require.EqualValues(t, 18, next)
}
