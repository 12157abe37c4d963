// Package unidiff renders the change of a text file as a unified diff
// (diff -u), for the people reading acp-agent exec and the demo. It is
// pure and safe for concurrent use.
package unidiff

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Unified renders the change of one file from old to new as a unified
// diff (diff -u, three lines of context) named name; isNew marks a file
// that did not exist (--- /dev/null). Equal texts give "".
func Unified(name, old, new string, isNew bool) string {
	if old == new && !isNew {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	var out strings.Builder
	name = filepath.ToSlash(name) // a/notes/x.txt on Windows too, as git writes it
	from := "a/" + name
	if isNew {
		from = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ b/%s\n", from, name)
	const ctx = 3
	for i := 0; i < len(ops); {
		// Skip to the next change, keeping ctx lines before it.
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		for start < i && ops[start].kind != ' ' {
			start++
		}
		// Extend while changes are less than 2*ctx equal lines apart.
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := ops[start].a, ops[start].b
		aLen, bLen := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			out.WriteByte('\n')
			if o.noEOL {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// hunkRange is a hunk header's "start,count" (1-based; a count of 0 names
// the line before).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// line is one line of a text; noEOL marks a last line without a newline.
type line struct {
	text  string
	noEOL bool
}

func splitLines(s string) []line {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	out := make([]line, 0, len(parts))
	for _, p := range parts {
		if p == "" {
			continue
		}
		out = append(out, line{text: strings.TrimSuffix(p, "\n"), noEOL: !strings.HasSuffix(p, "\n")})
	}
	return out
}

// diffOp is one line of the diff: kind ' ', '-' or '+', and the line's
// index in a and in b (for a '+' line, a is where it goes; for '-', b).
type diffOp struct {
	kind  byte
	text  string
	noEOL bool
	a, b  int
}

// maxDiffWork bounds the edit script search; beyond it the middle of the
// texts is shown as all removed and all added (still a correct diff).
const maxDiffWork = 4 << 20

// diffLines is a shortest edit script from a to b (Myers' algorithm),
// after the common prefix and suffix are taken off.
func diffLines(a, b []line) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{kind: ' ', text: a[i].text, noEOL: a[i].noEOL, a: i, b: i})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, diffOp{kind: ' ', text: a[ai].text, noEOL: a[ai].noEOL, a: ai, b: bi})
	}
	return ops
}

func myers(a, b []line, aOff, bOff int) []diffOp {
	n, m := len(a), len(b)
	all := func() []diffOp {
		var ops []diffOp
		for i, l := range a {
			ops = append(ops, diffOp{kind: '-', text: l.text, noEOL: l.noEOL, a: aOff + i, b: bOff})
		}
		for j, l := range b {
			ops = append(ops, diffOp{kind: '+', text: l.text, noEOL: l.noEOL, a: aOff + n, b: bOff + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return all()
	}
	maxD := n + m
	off := maxD
	v := make([]int, 2*maxD+2)
	var trace [][]int
	work := 0
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		work += len(v)
		if work > maxDiffWork {
			return all()
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, v, a, b, d, off, aOff, bOff)
			}
		}
	}
	return all()
}

// backtrack walks the trace of myers back from (len(a), len(b)).
func backtrack(trace [][]int, last []int, a, b []line, dEnd, off, aOff, bOff int) []diffOp {
	x, y := len(a), len(b)
	var rev []diffOp
	for d := dEnd; d > 0; d-- {
		v := trace[d] // v as it was before step d
		k := x - y
		var prevK int
		if k == -d || k != d && v[off+k-1] < v[off+k+1] {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, diffOp{kind: ' ', text: a[x].text, noEOL: a[x].noEOL, a: aOff + x, b: bOff + y})
		}
		if x == prevX {
			y--
			rev = append(rev, diffOp{kind: '+', text: b[y].text, noEOL: b[y].noEOL, a: aOff + x, b: bOff + y})
		} else {
			x--
			rev = append(rev, diffOp{kind: '-', text: a[x].text, noEOL: a[x].noEOL, a: aOff + x, b: bOff + y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{kind: ' ', text: a[x].text, noEOL: a[x].noEOL, a: aOff + x, b: bOff + y})
	}
	_ = last
	ops := make([]diffOp, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}
