package mcpclient

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// childModeEnv switches the test binary into one of the child roles below
// when it is re-executed as a stdio MCP server (or a grandchild of one).
const childModeEnv = "MCPCLIENT_TEST_CHILD"

// Child roles.
const (
	childServe    = "serve"    // MCP server on stdin/stdout; exits when stdin closes
	childStubborn = "stubborn" // like serve, but ignores stdin EOF and SIGTERM
	childSleep    = "sleep"    // a grandchild: sleeps, then exits
	childExit     = "exit"     // exits at once (benchmark baseline)
)

// childStderrLine is written to stderr by every serving child at start.
const childStderrLine = "hello from the child's stderr"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	// Keep the stdio shutdown ladder short; tests of it would otherwise take
	// seconds.
	terminateGrace = 300 * time.Millisecond
	pipeWaitDelay = 300 * time.Millisecond
	httpCloseGrace = 300 * time.Millisecond
	goleak.VerifyTestMain(m)
}

// runChild is the re-executed test binary. Only here may anything be
// written to stdout, which is the MCP channel to the parent.
func runChild(mode string) int {
	switch mode {
	case childExit:
		return 0
	case childSleep:
		time.Sleep(60 * time.Second)
		return 0
	case childServe, childStubborn:
	default:
		fmt.Fprintf(os.Stderr, "unknown child mode %q\n", mode)
		return 2
	}
	if mode == childStubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, childStderrLine)
	srv := newChildServer()
	err := srv.Run(context.Background(), &mcp.StdioTransport{})
	// A last line without a newline: the parent must still log it.
	fmt.Fprint(os.Stderr, "child exiting")
	if mode == childStubborn {
		select {} // only SIGKILL ends this
	}
	if err != nil {
		return 1
	}
	return 0
}

type messageIn struct {
	Message string `json:"message"`
}

type envIn struct {
	Name string `json:"name"`
}

func newChildServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "child", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in messageIn) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "echo called with", in.Message)
		return textResult("Echo: " + in.Message), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return textResult(strconv.Itoa(os.Getpid())), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "env"}, func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
		v, ok := os.LookupEnv(in.Name)
		if !ok {
			v = "<unset>"
		}
		return textResult(v), nil, nil
	})
	// spawn starts a grandchild in our process group and returns its pid.
	mcp.AddTool(srv, &mcp.Tool{Name: "spawn"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childModeEnv+"="+childSleep)
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return textResult(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "crash"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	return srv
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// childServer is the ACP configuration of a re-executed test binary.
func childServer(t testing.TB, name, mode string, env ...EnvVariable) Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Server{Stdio: &StdioServer{
		Name:    name,
		Command: exe,
		Env: append([]EnvVariable{
			{Name: childModeEnv, Value: mode},
			// Under -race the runtime sleeps 1 s at exit by default, which
			// would make every child overrun terminateGrace.
			{Name: "GORACE", Value: "atexit_sleep_ms=0"},
		}, env...),
	}}
}

// logBuffer collects a slog text log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newTestLogger() (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}
