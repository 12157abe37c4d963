package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// benchConn runs an AgentService for a over io.Pipes and returns a
// function that sends a line and one that reads the next line.
func benchConn(b *testing.B, a acp.Agent) (send func(string), next func() []byte) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = acp.NewAgentService(a, acp.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	b.Cleanup(func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		<-done
	})
	r := bufio.NewReaderSize(outR, 1<<20)
	send = func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	next = func() []byte {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	return send, next
}

// BenchmarkServiceStreamChunks measures the transport's throughput in
// process: one op is a prompt whose turn streams 10,000
// agent_message_chunk updates through the session's outbox, the
// connection and a line stream on a pipe, read line by line by the
// client.
func BenchmarkServiceStreamChunks(b *testing.B) {
	const chunks = 10000
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		for range chunks {
			if err := c.Update(ctx, acp.AgentMessageChunk("chunk ")); err != nil {
				return nil, err
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	send, next := benchConn(b, a)
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	next()
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	next()
	id := 1
	for b.Loop() {
		id++
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`, id))
		for n := 0; ; n++ {
			if line := next(); bytes.HasPrefix(line, []byte(`{"id":`)) {
				if n != chunks {
					b.Fatalf("%d chunks before the response", n)
				}
				break
			}
		}
	}
	b.ReportMetric(float64(chunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkServiceRequestRoundTrip measures one request and its response
// through the connection: session/new then session/close, the
// round trips an editor waits for when it opens a thread.
func BenchmarkServiceRequestRoundTrip(b *testing.B) {
	send, next := benchConn(b, &fakeAgent{})
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	next()
	id := 0
	for b.Loop() {
		id++
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`, id))
		line := next()
		sid := line[bytes.Index(line, []byte(`"sessionId":"`))+13:]
		sid = sid[:bytes.IndexByte(sid, '"')]
		id++
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/close","params":{"sessionId":%q}}`, id, sid))
		next()
	}
}

// BenchmarkServiceStreamChunksV2 is BenchmarkServiceStreamChunks on a v2
// connection: one op is a prompt whose turn streams 10,000
// agent_message_chunk updates (with their message id), then its idle
// state_update, which the client reads to the end.
func BenchmarkServiceStreamChunksV2(b *testing.B) {
	const chunks = 10000
	a := newFakeAgentV2()
	a.turn = func(ctx context.Context, s *fakeSessionV2, msgID string, _ *acpv2.PromptRequest) acpv2.StopReason {
		for range chunks {
			u := acpv2.SessionUpdate{AgentMessageChunk: &acpv2.ContentChunk{MessageID: "a" + msgID, Content: acpv2.ContentBlock{Text: &acpv2.TextContent{Text: "chunk "}}}}
			if err := s.c.Update(ctx, u); err != nil {
				return acpv2.StopReasonCancelled
			}
		}
		return acpv2.StopReasonEndTurn
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = acp.NewAgentService(&fakeAgent{}, acp.Options{V2: a}).Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	b.Cleanup(func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		<-done
	})
	r := bufio.NewReaderSize(outR, 1<<20)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	next := func() []byte {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"bench","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp"}}`)
	next()
	id := 1
	for b.Loop() {
		id++
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"v2-1","prompt":[{"type":"text","text":"go"}]}}`, id))
		n := 0
		for {
			line := next()
			if bytes.Contains(line, []byte(`"agent_message_chunk"`)) {
				n++
			}
			if bytes.Contains(line, []byte(`"state":"idle"`)) {
				break
			}
		}
		if n != chunks {
			b.Fatalf("%d chunks in the turn", n)
		}
	}
	b.ReportMetric(float64(chunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}
