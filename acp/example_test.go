package acp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/acp-agent/acp-agent/acp"
)

// echoAgent answers every prompt with its own text.
type echoAgent struct{ fakeAgent }

// Example_serveConn serves one connection of a Server over pipes, as a
// transport would hand it over: a client initializes, opens a session
// and prompts it. Any number of connections may be served at once, each
// with its own ServeConn.
func Example_serveConn() {
	agent := &echoAgent{fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		if err := c.Update(ctx, acp.AgentMessageChunk("echo: "+req.Prompt[0].Text.Text)); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}}
	srv := acp.NewServer(agent, acp.Options{})

	clientOut, agentIn := io.Pipe()
	agentOut, clientIn := io.Pipe()
	done := make(chan error)
	go func() { done <- srv.ServeConn(context.Background(), acp.NewLineStream(clientOut, clientIn, 0)) }()

	lines := bufio.NewScanner(agentOut)
	send := func(line string) {
		fmt.Fprintln(agentIn, line)
		lines.Scan()
		fmt.Println(lines.Text())
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`)
	lines.Scan()
	fmt.Println(lines.Text())

	agentIn.Close() // the end of input ends the connection
	fmt.Println(<-done)
	// Output:
	// {"id":1,"result":{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"close":{}}},"agentInfo":{"name":"fake","version":"1"}},"jsonrpc":"2.0"}
	// {"id":2,"result":{"sessionId":"s1"},"jsonrpc":"2.0"}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"echo: hi"}}}}
	// {"id":3,"result":{"stopReason":"end_turn"},"jsonrpc":"2.0"}
	// <nil>
}
