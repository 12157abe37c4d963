package runtime

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refMatch is the plain recursive matcher: every way of splitting name
// among the "**" (exponential, fine for short paths).
func refMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if refMatch(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && refMatch(pat[1:], name[1:])
}

// Patterns with several "**" match as the recursive definition says, for
// random patterns and paths over a small alphabet.
func TestGlobWithSeveralStarsMatchesLikeTheRecursiveDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	parts := []string{"**", "*", "a", "b", "a*", "?"}
	names := []string{"a", "b", "ab", "ba"}
	for range 20000 {
		pat := make([]string, 1+r.IntN(6))
		for i := range pat {
			pat[i] = parts[r.IntN(len(parts))]
		}
		name := make([]string, r.IntN(7))
		for i := range name {
			name[i] = names[r.IntN(len(names))]
		}
		require.Equal(t, refMatch(pat, name), matchComponents(pat, name), "%q against %q", strings.Join(pat, "/"), strings.Join(name, "/"))
	}
}
