package mcpclient

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// maxNameLen is the longest tool name the providers accept.
const maxNameLen = 64

// hashLen is the number of hex digits of the disambiguating suffix.
const hashLen = 8

// toolKey identifies a tool before it has a qualified name.
type toolKey struct {
	server, tool string
}

// sanitize replaces every character outside [a-zA-Z0-9_-] by '_'. The
// result is ASCII, so it can be cut at any byte.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

func baseName(k toolKey) string {
	return "mcp__" + sanitize(k.server) + "__" + sanitize(k.tool)
}

// hashedName is base cut to leave room for "_" and a hash of the exact
// (server, tool) pair; n > 0 picks another hash when the first is taken.
func hashedName(base string, k toolKey, n int) string {
	in := k.server + "\x00" + k.tool
	if n > 0 {
		in += "\x00" + strconv.Itoa(n)
	}
	sum := sha256.Sum256([]byte(in))
	if keep := maxNameLen - 1 - hashLen; len(base) > keep {
		base = base[:keep]
	}
	return base + "_" + hex.EncodeToString(sum[:])[:hashLen]
}

// qualifiedNames assigns each key its qualified name following the rule in
// the package doc. The result is parallel to keys and does not depend on
// their order. Keys must be distinct.
func qualifiedNames(keys []toolKey) []string {
	bases := make([]string, len(keys))
	count := make(map[string]int, len(keys))
	for i, k := range keys {
		bases[i] = baseName(k)
		count[bases[i]]++
	}
	// Resolve in a fixed order so that step 3 of the rule is deterministic.
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].server, keys[b].server), cmp.Compare(keys[a].tool, keys[b].tool))
	})
	names := make([]string, len(keys))
	taken := make(map[string]bool, len(keys))
	for _, i := range order {
		name := bases[i]
		if len(name) > maxNameLen || count[name] > 1 {
			name = hashedName(bases[i], keys[i], 0)
		}
		for n := 1; taken[name]; n++ {
			name = hashedName(bases[i], keys[i], n)
		}
		taken[name] = true
		names[i] = name
	}
	return names
}
