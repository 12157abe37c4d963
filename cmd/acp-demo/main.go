// Command acp-demo is a small ACP client: it starts an agent as a
// subprocess, runs initialize, session/new and one prompt over real pipes,
// and prints the streamed updates readably. `make demo` runs it against
// acp-agent with the offline replay model.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-agent/acp-agent/acp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "acp-demo:", err)
			os.Exit(1)
		}
	}
}

func run(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("acp-demo", flag.ContinueOnError)
	agentPath := fs.String("agent", "bin/acp-agent", "path of the agent binary")
	prompt := fs.String("prompt", "Hello! What can you do?", "the prompt to send")
	model := fs.String("model", "replay/default", "--model passed to the agent")
	raw := fs.Bool("raw", false, "also print every JSON-RPC line received")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}

	cmd := exec.CommandContext(ctx, *agentPath, "--model", *model, "--log-level", "warn")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the agent (run `make build` first?): %w", err)
	}
	p := &printer{out: out, raw: *raw}
	var agentOut io.Reader = stdout
	if *raw {
		agentOut = io.TeeReader(stdout, p.rawWriter())
	}
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewPlainObjectStream(rwc{agentOut, stdin}), p)
	defer func() {
		conn.Close()
		_ = cmd.Wait()
	}()

	p.section("initialize")
	var init acp.InitializeResponse
	if err := conn.Call(ctx, acp.MethodInitialize, &acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionV1,
		ClientCapabilities: acp.ClientCapabilities{},
		ClientInfo:         &acp.Implementation{Name: "acp-demo", Version: "1"},
	}, &init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	name := "agent"
	if init.AgentInfo != nil {
		name = init.AgentInfo.Name + " " + init.AgentInfo.Version
	}
	p.printf("connected to %s (protocol version %d)\n", name, init.ProtocolVersion)

	p.section("session/new")
	var sess acp.NewSessionResponse
	if err := conn.Call(ctx, acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}}, &sess); err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	p.printf("session %s in %s\n", sess.SessionID, cwd)

	p.section("session/prompt")
	p.printf("you: %s\n", *prompt)
	start := time.Now()
	var resp acp.PromptResponse
	err = conn.Call(ctx, acp.MethodSessionPrompt, &acp.PromptRequest{
		SessionID: sess.SessionID,
		Prompt:    []acp.ContentBlock{acp.TextBlock(*prompt)},
	}, &resp)
	p.endLine()
	if err != nil {
		return fmt.Errorf("session/prompt: %w", err)
	}
	p.section("done")
	p.printf("stopReason: %s after %d updates in %s\n", resp.StopReason, p.updates, time.Since(start).Round(time.Millisecond))
	return nil
}

// printer shows the agent's messages as a person would like to read them.
type printer struct {
	mu      sync.Mutex
	out     io.Writer
	raw     bool
	updates int
	kind    string // the kind of chunk being printed, to break lines between kinds
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, format, args...)
}

func (p *printer) section(name string) { p.printf("\n\033[1m== %s ==\033[0m\n", name) }

func (p *printer) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kind != "" {
		fmt.Fprintln(p.out, "\033[0m")
		p.kind = ""
	}
}

func (p *printer) rawWriter() io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if line != "" {
				fmt.Fprintf(p.out, "\033[2m<- %s\033[0m", line)
			}
		}
		return len(b), nil
	})
}

// Handle receives the agent's notifications and requests.
func (p *printer) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Method != acp.MethodSessionUpdate {
		if !req.Notif {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: acp.CodeMethodNotFound, Message: "acp-demo does not implement " + req.Method})
		}
		return
	}
	var n acp.SessionNotification
	if req.Params == nil || json.Unmarshal(*req.Params, &n) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updates++
	u := n.Update
	switch {
	case u.AgentThoughtChunk != nil:
		p.switchKind("thought", "\033[2;3mthinking: ")
		fmt.Fprint(p.out, blockText(u.AgentThoughtChunk.Content))
	case u.AgentMessageChunk != nil:
		p.switchKind("message", "agent: ")
		fmt.Fprint(p.out, blockText(u.AgentMessageChunk.Content))
	default:
		p.switchKind("", "")
		data, _ := json.Marshal(u)
		fmt.Fprintf(p.out, "update: %s\n", data)
	}
}

func (p *printer) switchKind(kind, prefix string) {
	if p.kind == kind {
		return
	}
	if p.kind != "" {
		fmt.Fprint(p.out, "\033[0m\n")
	}
	p.kind = kind
	fmt.Fprint(p.out, prefix)
}

func blockText(b acp.ContentBlock) string {
	if b.Text != nil {
		return b.Text.Text
	}
	data, _ := json.Marshal(b)
	return string(data)
}

type rwc struct {
	io.Reader
	io.WriteCloser
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
