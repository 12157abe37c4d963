package host

import (
	"bytes"
	"log/slog"
	"math"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/persistence"
)

// A session/load replays the conversation as History shows it after the
// load: repaired (loadrepair.go), after the last /clear, with what a
// load completes (an interrupted rewind) done. replayStream sends it while
// the file is still being decoded (persistence.OpenDecodedStream), and
// sends exactly that: only what no later record can change goes out
// early, and the rest, once the session is open, from History itself.
//
//   - A clear drops everything before it: nothing is sent before the last
//     line that may be a clear record has been decoded (lastClearLine; if
//     it is not one, nothing is streamed).
//   - The load repair is decided step by step: a tool-call step and the
//     results directly after it. Entries are repaired in chunks that end
//     before an entry that is not a tool output, where planLoadRepair's
//     decisions for what comes before do not depend on what comes after;
//     the last chunk is left to the end.
//   - A rewind a crash interrupted changes the conversation when the
//     session opens: with one pending, nothing is streamed.
//
// At the end the items sent are checked against History; a difference
// would be a bug here, and is logged.

// replayChunk is how many entries replayStream gathers before it repairs
// and sends them (it cuts at the next entry that is not a tool output).
const replayChunk = 64

// historyBuilder turns entries, in order, into History's items: each
// plan where it was sent, before the entry it preceded (after a tool
// output: a tool's plan comes after its call).
type historyBuilder struct {
	plans []placedPlan // not yet placed, in order
	next  int          // index of the next entry
	emit  func(HistoryItem)
}

// placePlans emits the plans sent before entry upTo (or at it).
func (b *historyBuilder) placePlans(upTo int) {
	for len(b.plans) > 0 && b.plans[0].at <= upTo {
		b.emit(HistoryItem{Plan: b.plans[0].plan})
		b.plans = b.plans[1:]
	}
}

// add emits entry e, the next one, with the plans before it.
func (b *historyBuilder) add(e *agent.Entry) {
	i := b.next
	b.next++
	if e.Kind != agent.EntryToolOutput {
		b.placePlans(i)
	}
	switch e.Kind {
	case agent.EntryUser, agent.EntryAssistant:
		b.emit(HistoryItem{Entry: e})
	case agent.EntryToolOutput:
		b.emit(HistoryItem{Entry: e})
		b.placePlans(i)
	}
}

// replayStream is the replay of a session/load as its file is decoded.
// Its methods run on the loading goroutine.
type replayStream struct {
	emit func(HistoryItem)
	log  *slog.Logger
	// on: items may still be sent before the end.
	on bool
	// hold is where the last line that may be a clear record starts (-1:
	// there is none); started once it has been passed.
	hold    int64
	started bool
	// raw are the entries gathered and not yet repaired, rawPlans the
	// plans among them (at: the index in raw of the entry they precede).
	raw      []agent.Entry
	rawPlans []placedPlan
	b        historyBuilder
	// sent counts the items sent and sum is their itemSum, to be checked
	// against History at the end.
	sent int
	sum  uint64
}

// itemSum adds enough of an item to sum to tell that History has the
// items sent, in that order (FNV-1a over kinds, call ids and lengths).
func itemSum(sum uint64, it HistoryItem) uint64 {
	const prime = 1099511628211
	mix := func(v uint64) { sum = (sum ^ v) * prime }
	if it.Plan != nil {
		mix(1)
		mix(uint64(len(it.Plan.Entries)))
		return sum
	}
	e := it.Entry
	mix(2)
	for i := 0; i < len(e.Kind); i++ {
		mix(uint64(e.Kind[i]))
	}
	for i := 0; i < len(e.ToolCallID); i++ {
		mix(uint64(e.ToolCallID[i]))
	}
	mix(uint64(len(e.Text)))
	mix(uint64(len(e.Reasoning)))
	return sum
}

const sumStart = 14695981039346656037

// newReplayStream replays to emit, which must not keep the items it is
// given.
func newReplayStream(emit func(HistoryItem), log *slog.Logger) *replayStream {
	r := &replayStream{emit: emit, log: log, hold: -1, started: true, sum: sumStart}
	r.b.emit = func(it HistoryItem) {
		r.sent++
		r.sum = itemSum(r.sum, it)
		r.emit(it)
	}
	return r
}

// opened is told the file's content before its records are decoded;
// without stream, everything is sent at the end.
func (r *replayStream) opened(data []byte, headerEnd int64, stream bool) {
	r.on = stream
	if r.on {
		r.hold = lastClearLine(data, headerEnd)
		r.started = r.hold < 0
	}
}

// record is told each record as it is decoded, in order
// (persistence.Stream.Record).
func (r *replayStream) record(_ int, off int64, d *decodedRecord, err error) {
	if !r.on {
		return
	}
	if !r.started {
		switch {
		case off < r.hold:
		case off == r.hold && err == nil && d.rec != nil && d.rec.Type == recClear:
			r.started = true // what came before is dropped: never sent
		default:
			// The line that may have been a clear was not one (or not a
			// record): what came before it is history, and was not sent.
			r.on = false
		}
		return
	}
	if err != nil {
		return // readRecords skips it too
	}
	if d.rec == nil {
		if d.entry.Kind != agent.EntryToolOutput && len(r.raw) >= replayChunk {
			r.flush()
		}
		r.raw = append(r.raw, d.entry)
		return
	}
	switch d.rec.Type {
	case recPlan:
		if d.rec.Plan != nil {
			r.rawPlans = append(r.rawPlans, placedPlan{at: len(r.raw), plan: d.rec.Plan.plan()})
		}
	case recClear:
		// lastClearLine finds every clear: this cannot happen. What was
		// sent stays sent; nothing more is until the end.
		r.log.Error("a clear record was decoded after the replay had started", "offset", off)
		r.on = false
	}
}

// flush repairs the entries gathered (they end before an entry that is
// not a tool output, so no later entry changes their repair) and sends
// them, with their plans placed where the repaired file has them.
func (r *replayStream) flush() {
	rep := planLoadRepair(r.raw)
	p := 0
	for i := range r.raw {
		for ; p < len(r.rawPlans) && r.rawPlans[p].at <= i; p++ {
			r.b.plans = append(r.b.plans, placedPlan{at: r.b.next, plan: r.rawPlans[p].plan})
		}
		if !rep.drop[i] {
			r.raw[i].FillText()
			r.b.add(&r.raw[i])
		}
		for k := range rep.insert[i] {
			e := &rep.insert[i][k]
			e.FillText()
			r.b.add(e)
		}
	}
	for ; p < len(r.rawPlans); p++ {
		r.b.plans = append(r.b.plans, placedPlan{at: r.b.next, plan: r.rawPlans[p].plan})
	}
	clear(r.raw)
	r.raw, r.rawPlans = r.raw[:0], r.rawPlans[:0]
}

// finish sends what was not sent yet of hs's History, once the session
// is open (what a load completes done).
func (r *replayStream) finish(hs *Session) {
	items := hs.History()
	n := min(r.sent, len(items))
	sum := uint64(sumStart)
	for _, it := range items[:n] {
		sum = itemSum(sum, it)
	}
	if n < r.sent || sum != r.sum {
		r.log.Error("the replay sent while the session was read is not its history", "sent", r.sent, "history", len(items))
	}
	for i := range items[n:] {
		r.emit(items[n+i])
	}
}

// lastClearLine returns where the last line of data (from headerEnd on)
// that may be a clear record starts, or -1. A record is a clear when its
// "type" decodes to "clear": its line holds `"clear"`, or spells a letter
// of it with a \u escape (\u0061 to \u007a); a line with neither cannot
// be one. Each pattern is found with bytes.Index (vectorized): the whole
// file costs a few milliseconds. A line without a newline (a torn tail)
// is never a record.
func lastClearLine(data []byte, headerEnd int64) int64 {
	end := bytes.LastIndexByte(data, '\n')
	if int64(end) < headerEnd {
		return -1
	}
	body := data[headerEnd:end]
	last := -1
	for at := 0; ; {
		i := bytes.Index(body[at:], []byte(`"clear"`))
		if i < 0 {
			break
		}
		last, at = at+i, at+i+1
	}
	for at := 0; ; {
		i := bytes.Index(body[at:], []byte(`\u00`))
		if i < 0 {
			break
		}
		if at+i+4 < len(body) && (body[at+i+4] == '6' || body[at+i+4] == '7') {
			last = max(last, at+i)
		}
		at += i + 1
	}
	if last < 0 {
		return -1
	}
	return headerEnd + int64(bytes.LastIndexByte(body[:last], '\n')+1)
}

// openHistory opens session id's file history (its checkpoint log, read
// once for the load) and reports whether it holds a rewind that neither
// completed nor failed, which the load completes (so the conversation
// replayed is known only then). When the history cannot be read, a
// rewind is assumed, and the session tries again to open it.
func (h *Host) openHistory(id string) (history *persistence.Checkpoints, rewindPending bool) {
	history, err := persistence.OpenCheckpoints(checkpointDir(h.store.Dir(), id))
	if err != nil {
		return nil, true
	}
	pending, _ := unfinishedRewind(history.Records())
	return history, pending != nil
}

// placeAll emits the plans left after the last entry (History's end).
func (b *historyBuilder) placeAll() { b.placePlans(math.MaxInt) }
