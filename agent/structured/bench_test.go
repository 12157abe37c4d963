package structured

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

var (
	bigDocOnce sync.Once
	bigDoc     []byte
)

// bigJSON returns a ~10 MB JSON array of objects, the shape of a long
// structured model answer (strings with escapes and non-ASCII text,
// integers, floats, booleans, nulls and a nested array per object).
func bigJSON() []byte {
	bigDocOnce.Do(func() {
		var sb strings.Builder
		sb.WriteString("[")
		for i := 0; sb.Len() < 10<<20; i++ {
			if i > 0 {
				sb.WriteString(",\n")
			}
			fmt.Fprintf(&sb, `{"id":%d,"title":"Item number %d — \"quoted\" text","price":%d.%02d,"in_stock":%t,"tags":["alpha","beta","g%d"],"note":null,"rating":%d}`,
				i, i, i%1000, i%100, i%3 == 0, i%17, i%5)
		}
		sb.WriteString("]")
		bigDoc = []byte(sb.String())
	})
	return bigDoc
}

// BenchmarkParser10MB feeds the 10 MB document in 4 KiB chunks with an
// event for every complete value, the way a response is parsed while it
// streams.
func BenchmarkParser10MB(b *testing.B) {
	doc := bigJSON()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		events := 0
		p := NewParser(WithHandler(func(Event) { events++ }))
		for off := 0; off < len(doc); off += 4096 {
			_, _ = p.Write(doc[off:min(off+4096, len(doc))])
		}
		if err := p.Close(); err != nil || events == 0 {
			b.Fatalf("err=%v events=%d", err, events)
		}
	}
}

// BenchmarkParser10MBNoEvents is the same without events (Parse's mode).
func BenchmarkParser10MBNoEvents(b *testing.B) {
	doc := bigJSON()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		p := NewParser(WithMode(EmitNone))
		for off := 0; off < len(doc); off += 4096 {
			_, _ = p.Write(doc[off:min(off+4096, len(doc))])
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodingJSON10MB is the baseline: json.Unmarshal of the same
// bytes into an any, all at once.
func BenchmarkEncodingJSON10MB(b *testing.B) {
	doc := bigJSON()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
	}
}
