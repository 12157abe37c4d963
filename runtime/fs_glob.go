package runtime

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// maxBraceExpansions bounds "{a,b}" expansion so a hostile pattern such as
// "{a,b}{a,b}{a,b}..." cannot make us build millions of patterns.
const maxBraceExpansions = 64

// globPattern is a compiled doublestar pattern: one or more alternatives
// (from brace expansion), each a list of path components where "**"
// stands for zero or more directories and every other component is a
// path.Match pattern (*, ?, [class], \escape) that never crosses "/".
type globPattern struct {
	alts [][]string
}

// compileGlob parses pattern. It must be relative, use "/" as separator
// and contain no ".." component; "." and empty components are dropped, so
// "./src//*.go" means "src/*.go".
func compileGlob(pattern string) (*globPattern, error) {
	if pattern == "" {
		return nil, errors.New("empty glob pattern")
	}
	if strings.HasPrefix(pattern, "/") {
		return nil, fmt.Errorf("glob pattern %q must be relative", pattern)
	}
	expanded, err := expandBraces(pattern)
	if err != nil {
		return nil, fmt.Errorf("glob pattern %q: %w", pattern, err)
	}
	g := &globPattern{}
	for _, p := range expanded {
		var comps []string
		for _, c := range strings.Split(p, "/") {
			switch {
			case c == "" || c == ".":
				continue
			case c == "..":
				return nil, fmt.Errorf(`glob pattern %q must not contain a ".." component`, pattern)
			case c == "**":
				// Consecutive ** mean the same as one; collapsing them
				// keeps matching polynomial.
				if len(comps) > 0 && comps[len(comps)-1] == "**" {
					continue
				}
			default:
				if _, err := path.Match(c, ""); err != nil {
					return nil, fmt.Errorf("glob pattern %q: %w", pattern, err)
				}
			}
			comps = append(comps, c)
		}
		if len(comps) == 0 {
			return nil, fmt.Errorf("glob pattern %q matches nothing", pattern)
		}
		g.alts = append(g.alts, comps)
	}
	return g, nil
}

// expandBraces expands the first top-level "{a,b}" group recursively.
// Braces inside [classes] or after a backslash are literal.
func expandBraces(p string) ([]string, error) {
	open, close, commas := findBraces(p)
	if open < 0 {
		return []string{p}, nil
	}
	var out []string
	prev := open + 1
	for _, c := range append(commas, close) {
		rest, err := expandBraces(p[:open] + p[prev:c] + p[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxBraceExpansions {
			return nil, fmt.Errorf("more than %d brace expansions", maxBraceExpansions)
		}
		prev = c + 1
	}
	return out, nil
}

// findBraces returns the first balanced brace group with at least one
// top-level comma, or open < 0.
func findBraces(p string) (open, close int, commas []int) {
	open = -1
	depth := 0
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '{':
			if depth == 0 {
				open, commas = i, nil
			}
			depth++
		case c == ',' && depth == 1:
			commas = append(commas, i)
		case c == '}' && depth > 0:
			depth--
			if depth == 0 {
				if len(commas) > 0 {
					return open, i, commas
				}
				open = -1
			}
		}
	}
	return -1, -1, nil
}

// match reports whether the relative path with components name matches.
func (g *globPattern) match(name []string) bool {
	for _, alt := range g.alts {
		if matchComponents(alt, name) {
			return true
		}
	}
	return false
}

// mayMatchUnder reports whether something below the directory dir could
// match, so walks can prune subtrees.
func (g *globPattern) mayMatchUnder(dir []string) bool {
	for _, alt := range g.alts {
		if prefixMatches(alt, dir) {
			return true
		}
	}
	return false
}

// matchComponents reports whether the path with components name matches
// the pattern pat.
func matchComponents(pat, name []string) bool {
	if countStars(pat) > 1 {
		return matchComponentsTable(pat, name)
	}
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchComponents(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func countStars(pat []string) int {
	n := 0
	for _, c := range pat {
		if c == "**" {
			n++
		}
	}
	return n
}

// matchComponentsTable is matchComponents for patterns with several "**":
// trying each way of splitting name among them (as the loop does) is
// exponential ("**/*/" twenty times against a path forty deep is about
// 10^11 ways), so whether pat[i:] matches name[j:] is computed once for
// each i and j, from the pattern's end: len(pat)*len(name) steps.
func matchComponentsTable(pat, name []string) bool {
	n := len(name)
	next := make([]bool, n+1) // next[j]: pat[i+1:] matches name[j:]
	cur := make([]bool, n+1)
	next[n] = true // the empty pattern matches the empty rest only
	for i := len(pat) - 1; i >= 0; i-- {
		if pat[i] == "**" {
			// Zero or more components: any rest at or after j.
			found := false
			for j := n; j >= 0; j-- {
				found = found || next[j]
				cur[j] = found
			}
		} else {
			cur[n] = false
			for j := n - 1; j >= 0; j-- {
				if next[j+1] {
					ok, _ := path.Match(pat[i], name[j])
					cur[j] = ok
				} else {
					cur[j] = false
				}
			}
		}
		cur, next = next, cur
	}
	return next[0]
}

func prefixMatches(pat, dir []string) bool {
	for len(dir) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return len(pat) > 0
}
