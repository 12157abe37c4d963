package mcpclient

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The three benchmarks below compare:
//   - BenchmarkConnectThreeStdioServers: our Connect of three re-executed
//     test binaries (start, initialize, list tools), Close not timed;
//   - BenchmarkConnectThreeStdioServersBareSDK: the same with the go-sdk
//     alone (exec, Client.Connect, list tools), the floor for Connect;
//   - BenchmarkStartThreeChildProcesses: starting three children that exit
//     at once and waiting for them, the cost of the processes alone.
//
// Our own overhead is the first minus the second.

const benchServers = 3

func BenchmarkConnectThreeStdioServers(b *testing.B) {
	servers := make([]Server, benchServers)
	for i := range servers {
		servers[i] = childServer(b, "s"+strconv.Itoa(i), childServe)
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		m, failures := Connect(ctx, servers, Options{})
		b.StopTimer()
		if len(failures) > 0 {
			b.Fatal(failures[0].Err)
		}
		if n := len(m.Tools()); n != 5*benchServers {
			b.Fatalf("got %d tools", n)
		}
		_ = m.Close()
		b.StartTimer()
	}
}

func BenchmarkConnectThreeStdioServersBareSDK(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), childModeEnv+"="+childServe, "GORACE=atexit_sleep_ms=0")
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		sessions := make([]*mcp.ClientSession, benchServers)
		var wg sync.WaitGroup
		errs := make([]error, benchServers)
		for i := range benchServers {
			wg.Go(func() {
				cmd := exec.Command(exe)
				cmd.Env = env
				c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
				if err != nil {
					errs[i] = err
					return
				}
				sessions[i] = cs
				for _, err := range cs.Tools(ctx, nil) {
					if err != nil {
						errs[i] = err
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		for i, cs := range sessions {
			if cs != nil {
				_ = cs.Close()
			}
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
		}
		b.StartTimer()
	}
}

func BenchmarkStartThreeChildProcesses(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), childModeEnv+"="+childExit, "GORACE=atexit_sleep_ms=0")
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range benchServers {
			wg.Go(func() {
				cmd := exec.Command(exe)
				cmd.Env = env
				if err := cmd.Run(); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
}
