package runtime

import (
	"sync"
	"unicode/utf8"
)

// tailBuffer keeps the last limit bytes written to it in a ring. Writes
// never fail and never block on the reader, so the process's pipe keeps
// draining after the cap: a producer of any size finishes with memory
// bounded by limit.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte // grows to limit, then is a ring starting at start
	start int
	total int64 // bytes ever written
	// tee, if set, is given every write as it comes (outside mu).
	tee func([]byte)
}

func newTailBuffer(limit int) *tailBuffer {
	return &tailBuffer{limit: limit, buf: make([]byte, 0, min(limit, 4<<10))}
}

// Write keeps the tail of p, and gives p to tee; it always reports
// len(p) written.
func (b *tailBuffer) Write(p []byte) (int, error) {
	if b.tee != nil && len(p) > 0 {
		b.tee(p)
	}
	return b.keep(p)
}

func (b *tailBuffer) keep(p []byte) (int, error) {
	n := len(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(n)
	if b.limit <= 0 {
		return n, nil
	}
	if len(p) >= b.limit {
		if cap(b.buf) < b.limit {
			b.buf = make([]byte, b.limit)
		}
		b.buf = b.buf[:b.limit]
		copy(b.buf, p[len(p)-b.limit:])
		b.start = 0
		return n, nil
	}
	if room := b.limit - len(b.buf); room > 0 {
		k := min(room, len(p))
		b.buf = append(b.buf, p[:k]...)
		p = p[k:]
	}
	// Full: overwrite the oldest bytes, which start at b.start.
	for len(p) > 0 {
		c := copy(b.buf[b.start:], p)
		p = p[c:]
		b.start = (b.start + c) % b.limit
	}
	return n, nil
}

// snapshot returns the retained bytes in order and whether earlier bytes
// were dropped. When bytes were dropped the result starts at a UTF-8 rune
// start (at most utf8.UTFMax-1 continuation bytes are skipped), and an
// incomplete rune at the end (a write split mid-rune) is held back, so a
// UTF-8 stream always yields valid UTF-8 within the limit.
func (b *tailBuffer) snapshot() (string, bool) {
	b.mu.Lock()
	out := make([]byte, len(b.buf))
	k := copy(out, b.buf[b.start:])
	copy(out[k:], b.buf[:b.start])
	truncated := b.total > int64(len(out))
	b.mu.Unlock()
	if truncated {
		i := 0
		for i < len(out) && i < utf8.UTFMax-1 && !utf8.RuneStart(out[i]) {
			i++
		}
		out = out[i:]
	}
	return string(trimPartialRune(out)), truncated
}

// since returns what was written after offset (a count of bytes ever
// written) and is still retained, the offset to read from next, and how
// many bytes after offset were dropped before they could be read. Like
// snapshot, it starts on a rune boundary after a drop and holds back an
// incomplete trailing rune for the next read.
func (b *tailBuffer) since(offset int64) (string, int64, int64) {
	b.mu.Lock()
	ordered := make([]byte, len(b.buf))
	k := copy(ordered, b.buf[b.start:])
	copy(ordered[k:], b.buf[:b.start])
	total := b.total
	b.mu.Unlock()
	retained := total - int64(len(ordered))
	offset = min(max(offset, 0), total)
	var dropped int64
	if offset < retained {
		dropped, offset = retained-offset, retained
	}
	out := ordered[offset-retained:]
	if dropped > 0 {
		for i := 0; i < utf8.UTFMax-1 && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
			out, offset = out[1:], offset+1
		}
	}
	out = trimPartialRune(out)
	return string(out), offset + int64(len(out)), dropped
}

// trimPartialRune drops a trailing rune prefix that is valid so far but
// incomplete. Bytes that can never be valid are left alone.
func trimPartialRune(p []byte) []byte {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return p[:i]
			}
			return p
		}
	}
	return p
}
