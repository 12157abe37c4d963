//go:build linux

package runtime

import (
	"context"
	"testing"
)

func BenchmarkTerminalStartWait(b *testing.B) {
	term := NewLocalTerminal(TerminalOptions{Env: []string{"PATH=" + termTestPath}})
	defer term.Close()
	ctx := context.Background()
	spec := CommandSpec{Command: "true", Cwd: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		p, err := term.Start(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if st, err := p.Wait(ctx); err != nil || *st.ExitCode != 0 {
			b.Fatalf("wait: %v %+v", err, st)
		}
		if err := p.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTailBufferWrite(b *testing.B) {
	buf := newTailBuffer(DefaultOutputByteLimit)
	chunk := make([]byte, 32<<10)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = buf.Write(chunk)
	}
}
