package persistence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// span is the byte range [off, end) of one line, newline included.
type span struct{ off, end int64 }

// scanned is a session file split into lines.
type scanned struct {
	header    Header
	headerEnd int64             // offset just past the header's newline
	records   []json.RawMessage // slices into the scanned buffer
	ends      []int64           // ends[i]: offset just past record i's newline
	skipped   []SkippedLine
	skips     []span // the skipped lines' ranges, ascending
	goodEnd   int64  // offset just past the last line kept; len(buf) if nothing is torn
}

var (
	errEmptyLine = errors.New("empty line")
	errNotObject = errors.New("not a JSON object")
	errBadJSON   = errors.New("invalid JSON")
)

// scan splits buf, the whole content of session id's file, into its
// header, records and bad lines, and finds the torn tail if there is one.
// It never copies: the records are slices into buf.
//
// The rules (docs/jsonl-format.md): line 1 must be a complete header line
// for id, else ErrCorrupt. A last line without a newline, or whose content
// is not a JSON object, is torn: everything from its first byte on is to be
// cut. Any other line that is not a JSON object is skipped and reported,
// and costs only itself.
//
// With a decoder, each line that may be a record is decoded once, as it is
// checked (see OpenDecoded), instead of only validated.
func scan(buf []byte, id string, dec *decoder) (scanned, error) {
	var sc scanned
	nl := bytes.IndexByte(buf, '\n')
	if nl < 0 {
		if len(buf) == 0 {
			return sc, fmt.Errorf("%w: empty file", ErrCorrupt)
		}
		return sc, fmt.Errorf("%w: header line has no newline", ErrCorrupt)
	}
	h, err := parseHeader(buf[:nl])
	if err != nil {
		return sc, err
	}
	if h.ID != id {
		return sc, fmt.Errorf("%w: header names session %q", ErrCorrupt, h.ID)
	}
	sc.header = h
	sc.headerEnd = int64(nl + 1)

	// One exact-size allocation for each index; the count is a fast
	// vectorized pass and saves the repeated growth of append.
	n := bytes.Count(buf[nl+1:], []byte{'\n'})
	sc.records = make([]json.RawMessage, 0, n)
	sc.ends = make([]int64, 0, n)
	sc.goodEnd = int64(len(buf))

	// Split first (a fast pass), then validate the lines in parallel:
	// validation is most of the cost of opening a long session.
	lines := make([]span, 0, n)
	pos := nl + 1
	for pos < len(buf) {
		i := bytes.IndexByte(buf[pos:], '\n')
		if i < 0 {
			sc.goodEnd = int64(pos)
			break
		}
		lines = append(lines, span{int64(pos), int64(pos + i + 1)})
		pos += i + 1
	}
	recs := make([]json.RawMessage, len(lines))
	errs := make([]error, len(lines))
	check := checkValid
	if dec != nil {
		if dec.opened != nil {
			if err := dec.opened(h, buf, sc.headerEnd); err != nil {
				dec.openErr = err
				return sc, err
			}
		}
		dec.alloc(len(lines))
		check = dec.check
	}
	var kept []int
	if dec != nil {
		kept = make([]int, 0, len(lines))
	}
	// classify files line k, checked, as a record, the torn tail or a
	// skipped line; lines are classified in order.
	classify := func(k int) {
		ln := lines[k]
		switch {
		case errs[k] == nil:
			if dec != nil {
				kept = append(kept, k)
				if dec.each != nil {
					dec.each(len(sc.records), k, ln.off)
				}
			}
			sc.records = append(sc.records, recs[k])
			sc.ends = append(sc.ends, ln.end)
		case ln.end == int64(len(buf)):
			sc.goodEnd = ln.off
		default:
			sc.skipped = append(sc.skipped, SkippedLine{Line: k + 2, Offset: ln.off, Err: errs[k]})
			sc.skips = append(sc.skips, ln)
		}
	}
	if dec != nil && dec.each != nil {
		checkLinesInOrder(buf, lines, recs, errs, check, classify)
	} else {
		checkLines(buf, lines, recs, errs, check)
		for k := range lines {
			classify(k)
		}
	}
	if dec != nil {
		dec.keep(kept)
	}
	return sc, nil
}

// decoder decodes records as scan checks them (OpenDecoded): alloc is
// told the number of lines, check is called at most once for line k (from
// several goroutines at once), and keep is told, in order, the lines that
// became records. opened, if set, is called once the header is read and
// before any line is checked (an error ends the scan, and is kept in
// openErr); each, if set, is told each record (its index, its line and
// where the line starts) in order on scan's goroutine as soon as it and
// every line before it are checked, while later lines still are.
type decoder struct {
	alloc   func(lines int)
	check   func(k int, rec []byte) error
	keep    func(kept []int)
	opened  func(h Header, data []byte, headerEnd int64) error
	each    func(i, k int, off int64)
	openErr error
}

// checkValid is scan's check without a decoder: rec must be valid JSON.
func checkValid(_ int, rec []byte) error {
	if !json.Valid(rec) {
		return errBadJSON
	}
	return nil
}

// checkLines runs checkRecord on every line (without its newline), on
// up to GOMAXPROCS goroutines for long files.
func checkLines(buf []byte, lines []span, recs []json.RawMessage, errs []error, valid func(k int, rec []byte) error) {
	check := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			recs[k], errs[k] = checkRecord(k, buf[lines[k].off:lines[k].end-1], valid)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(lines)/1024)
	if workers <= 1 {
		check(0, len(lines))
		return
	}
	per := (len(lines) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(lines))
		wg.Go(func() { check(lo, hi) })
	}
	wg.Wait()
}

// orderedBatch is the number of lines checkLinesInOrder hands a worker
// at a time: small, so the first records reach visit soon.
const orderedBatch = 256

// checkLinesInOrder is checkLines that also calls visit(k) for each line,
// in order, on the calling goroutine, as soon as line k and every line
// before it are checked, while the workers check later lines. Workers take
// batches in file order, so the checked prefix grows steadily; visit may
// block (a slow reader of a replay) without holding the workers up.
func checkLinesInOrder(buf []byte, lines []span, recs []json.RawMessage, errs []error, valid func(k int, rec []byte) error, visit func(k int)) {
	batches := (len(lines) + orderedBatch - 1) / orderedBatch
	done := make([]chan struct{}, batches)
	for b := range done {
		done[b] = make(chan struct{})
	}
	var next atomic.Int64
	work := func() {
		for {
			b := int(next.Add(1) - 1)
			if b >= batches {
				return
			}
			for k := b * orderedBatch; k < min((b+1)*orderedBatch, len(lines)); k++ {
				recs[k], errs[k] = checkRecord(k, buf[lines[k].off:lines[k].end-1], valid)
			}
			close(done[b])
		}
	}
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), batches)) {
		wg.Go(work)
	}
	// The workers end by themselves once every batch is taken, whatever
	// visit does; they are waited for before scan goes on.
	defer wg.Wait()
	for b := range batches {
		<-done[b]
		for k := b * orderedBatch; k < min((b+1)*orderedBatch, len(lines)); k++ {
			visit(k)
		}
	}
}

// checkRecord returns line k without surrounding whitespace if it is one
// JSON object, else why not. valid checks (or decodes) what looks like an
// object.
func checkRecord(k int, line []byte, valid func(k int, rec []byte) error) (json.RawMessage, error) {
	rec := trimSpace(line)
	switch {
	case len(rec) == 0:
		return nil, errEmptyLine
	case rec[0] != '{':
		if json.Valid(rec) {
			return nil, errNotObject
		}
		return nil, errBadJSON
	case rec[len(rec)-1] != '}':
		// A cheap reject for the common torn write.
		return nil, errBadJSON
	}
	if err := valid(k, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// trimSpace trims JSON whitespace. Only the ends are touched, so it is
// cheap on megabyte lines (bytes.TrimSpace would also be, but it trims
// Unicode spaces that are not JSON whitespace).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// parseHeader decodes and checks a header line (without its newline).
func parseHeader(line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	if h.Type != headerType {
		return Header{}, fmt.Errorf("%w: header type %q, want %q", ErrCorrupt, h.Type, headerType)
	}
	if h.Version < 1 || h.Version > FormatVersion {
		return Header{}, fmt.Errorf("%w: format version %d, this build reads 1 to %d", ErrCorrupt, h.Version, FormatVersion)
	}
	if err := ValidateID(h.ID); err != nil {
		return Header{}, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	return h, nil
}

// normalizeRecord returns rec as one line: a JSON object without
// surrounding whitespace or newlines. It copies only when it must compact.
func normalizeRecord(rec json.RawMessage) (json.RawMessage, error) {
	r := trimSpace(rec)
	if len(r) == 0 {
		return nil, errEmptyLine
	}
	if r[0] != '{' || !json.Valid(r) {
		if json.Valid(r) {
			return nil, errNotObject
		}
		return nil, errBadJSON
	}
	if bytes.ContainsAny(r, "\n\r") {
		// Raw newlines can only be whitespace between tokens (inside a
		// string they must be escaped), so compacting removes them all.
		var b bytes.Buffer
		b.Grow(len(r))
		if err := json.Compact(&b, r); err != nil {
			return nil, fmt.Errorf("%w: %w", errBadJSON, err)
		}
		r = b.Bytes()
	}
	return r, nil
}
