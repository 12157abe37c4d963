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
