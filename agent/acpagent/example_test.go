package acpagent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
)

// Example serves the agent over ACP on one connection, here a pair of
// pipes (os.Stdin and os.Stdout in the binary): a client initializes,
// opens a session and prompts it; the agent answers with the offline
// replay model.
func Example() {
	dir, err := os.MkdirTemp("", "acp-agent-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [{"events": [{"text": "Hello"}, {"text": " from the replay model."}]}]}`), 0o644); err != nil {
		panic(err)
	}
	a := acpagent.New(acpagent.Config{Config: host.Config{Model: "replay/" + script, Version: "example"}})
	defer a.Close()
	srv := acp.NewServer(a, acp.Options{})

	clientOut, agentIn := io.Pipe()
	agentOut, clientIn := io.Pipe()
	done := make(chan error)
	go func() { done <- srv.ServeConn(context.Background(), acp.NewLineStream(clientOut, clientIn, 0)) }()

	lines := bufio.NewScanner(agentOut)
	lines.Buffer(nil, 1<<20)
	// call sends a request and reads up to its response, printing the
	// text the agent streams meanwhile (in one or more chunks: those that
	// wait for a client that has not read yet are sent merged).
	call := func(id int, method string, params any) json.RawMessage {
		var text strings.Builder
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		fmt.Fprintf(agentIn, "%s\n", req)
		for lines.Scan() {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Params struct {
					Update struct {
						SessionUpdate string `json:"sessionUpdate"`
						Content       struct{ Text string }
					}
				}
			}
			if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
				panic(err)
			}
			if msg.ID != nil && *msg.ID == id {
				if text.Len() > 0 {
					fmt.Printf("agent: %q\n", text.String())
				}
				return msg.Result
			}
			if msg.Params.Update.SessionUpdate == "agent_message_chunk" {
				text.WriteString(msg.Params.Update.Content.Text)
			}
		}
		panic("the connection ended")
	}

	var init struct {
		AgentInfo struct{ Name, Version string }
	}
	json.Unmarshal(call(1, "initialize", map[string]any{"protocolVersion": 1}), &init)
	fmt.Println("initialized:", init.AgentInfo.Name, init.AgentInfo.Version)
	var session struct{ SessionID string }
	json.Unmarshal(call(2, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}), &session)
	var res struct{ StopReason string }
	json.Unmarshal(call(3, "session/prompt", map[string]any{"sessionId": session.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": "Hi"}}}), &res)
	fmt.Println("stop reason:", res.StopReason)

	agentIn.Close() // the end of input ends the connection
	fmt.Println("served:", <-done)
	agentOut.Close()
	// Output:
	// initialized: acp-agent example
	// agent: "Hello from the replay model."
	// stop reason: end_turn
	// served: <nil>
}
