package host

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// InterruptedToolResult is the result given, when a session is loaded, to
// a tool call whose result was never saved: the agent stopped (a crash, a
// kill, a torn last line) between the call and its result.
const InterruptedToolResult = "Error: interrupted: acp-agent stopped before this call's result was saved, " +
	"so it may or may not have run. Check its effects before repeating it."

// loadRepair is what loading must change in a session file so that its
// tool protocol is consistent (every call answered once, right after it),
// changing as little as possible: unanswered calls are answered with
// InterruptedToolResult, and only what cannot be made consistent is
// dropped. Every other record stays as it was, byte for byte.
type loadRepair struct {
	drop   []bool                // by entry: not usable
	insert map[int][]agent.Entry // by entry: results to add right after it
	n      int                   // entries with results to add
}

// planLoadRepair follows compact.Sanitize's rules (so the sanitizer has
// nothing left to do) on the entries, with one change: a tool-call step
// whose results simply stop (the rest was never written) is completed
// instead of dropped. Dropped are: a step with arguments that are not a
// JSON object, with duplicate or empty call ids, or whose results include
// one that answers no open call of it (the step and the results directly
// after it); and a result that answers no call. The text of an assistant
// message is its own entry, kept even when its calls are dropped.
func planLoadRepair(entries []agent.Entry) loadRepair {
	r := loadRepair{drop: make([]bool, len(entries)), insert: map[int][]agent.Entry{}}
	for i := 0; i < len(entries); {
		e := &entries[i]
		switch {
		case e.Kind == agent.EntryToolOutput:
			r.drop[i] = true // answers no call
			i++
			continue
		case e.Kind != agent.EntryToolCalls || len(e.ToolCalls) == 0:
			i++
			continue
		}
		run := 0 // results directly after the step
		for i+1+run < len(entries) && entries[i+1+run].Kind == agent.EntryToolOutput {
			run++
		}
		calls := e.ToolCalls
		ok := callsUsable(calls)
		answered := make([]bool, len(calls))
		matched, j := 0, i+1
		for ok && j < i+1+run && matched < len(calls) {
			k := callIndexOf(calls, entries[j].ToolCallID)
			if k < 0 || answered[k] {
				ok = false // a stray result in the middle of the step
				break
			}
			answered[k] = true
			matched++
			j++
		}
		if !ok {
			for k := i; k < i+1+run; k++ {
				r.drop[k] = true
			}
			i += 1 + run
			continue
		}
		if matched < len(calls) {
			// The results stop short: complete the step after its last one.
			var add []agent.Entry
			for k, c := range calls {
				if !answered[k] {
					add = append(add, agent.Entry{Kind: agent.EntryToolOutput, ToolCallID: c.ID, ToolName: c.Name,
						Text: InterruptedToolResult, IsError: true})
				}
			}
			r.insert[j-1] = add
			r.n++
		}
		i = j // results after a complete step are strays, dropped above
	}
	return r
}

// changed reports whether the file must change.
func (r loadRepair) changed() bool {
	if r.n > 0 {
		return true
	}
	for _, d := range r.drop {
		if d {
			return true
		}
	}
	return false
}

// appendOnly reports whether the repair only adds results after the last
// entry: the file is then appended to, not rewritten.
func (r loadRepair) appendOnly() bool {
	last := len(r.drop) - 1
	for i, d := range r.drop {
		if d {
			return false
		}
		if _, ok := r.insert[i]; ok && i != last {
			return false
		}
	}
	return true
}

func callsUsable(calls []llm.ToolCall) bool {
	for a, c := range calls {
		if c.ID == "" || !isJSONObjectText(c.Arguments) {
			return false
		}
		for b := range a {
			if calls[b].ID == c.ID {
				return false
			}
		}
	}
	return true
}

func callIndexOf(calls []llm.ToolCall, id string) int {
	if id == "" {
		return -1
	}
	for k := range calls {
		if calls[k].ID == id {
			return k
		}
	}
	return -1
}

// isJSONObjectText is compact's test of arguments: a JSON object, leading
// white space allowed.
func isJSONObjectText(s string) bool {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i < len(s) && s[i] == '{' && json.Valid([]byte(s[i:]))
}

// applyTo returns the file's new records (the kept ones as they were
// read, with the added results, stamped now, in place), the entries and
// where each starts. entryStart[i] is entry i's record index in recs.
func (r loadRepair) applyTo(recs []json.RawMessage, entries []agent.Entry, entryStart []int) ([]json.RawMessage, []agent.Entry, []int, error) {
	dropRec := make(map[int]bool)
	after := make(map[int][]agent.Entry) // by record index
	for i := range entries {
		if r.drop[i] {
			dropRec[entryStart[i]] = true
		}
		if add, ok := r.insert[i]; ok {
			after[entryStart[i]] = add
		}
	}
	byRec := make(map[int]int, len(entries)) // record index -> entry index
	for i, at := range entryStart {
		byRec[at] = i
	}
	var (
		out      = make([]json.RawMessage, 0, len(recs)+len(r.insert))
		kept     = make([]agent.Entry, 0, len(entries))
		keptFrom = make([]int, 0, len(entries))
	)
	for at, raw := range recs {
		if dropRec[at] {
			continue
		}
		if i, ok := byRec[at]; ok {
			keptFrom = append(keptFrom, len(out))
			kept = append(kept, entries[i])
		}
		out = append(out, raw)
		for _, e := range after[at] {
			e.Time = time.Now() // a new record: it gets its own time
			data, err := json.Marshal(entryRecord(&e))
			if err != nil {
				return nil, nil, nil, fmt.Errorf("encoding a repaired result: %w", err)
			}
			keptFrom = append(keptFrom, len(out))
			kept = append(kept, e)
			out = append(out, data)
		}
	}
	return out, kept, keptFrom, nil
}

// placePlans places plans, placed among the entries before the repair
// (at: the number of entries before each), among the repaired ones: a
// plan follows the entries kept before it and the results added after
// them, as the repaired file's records have it.
func (r loadRepair) placePlans(plans []placedPlan) []placedPlan {
	if plans == nil {
		return nil
	}
	out := make([]placedPlan, len(plans))
	before, i := 0, 0
	for k, p := range plans {
		for ; i < p.at && i < len(r.drop); i++ {
			if !r.drop[i] {
				before++
			}
			before += len(r.insert[i])
		}
		out[k] = placedPlan{at: before, plan: p.plan}
	}
	return out
}
