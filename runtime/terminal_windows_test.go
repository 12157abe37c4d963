package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/internal/winetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// childEnv makes this test binary act as a child process (testChild).
const childEnv = "ACP_RUNTIME_TEST_CHILD"

func init() {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(testChild(mode))
	}
}

// testChild is what the test binary does when started as a command:
//
//	tree FILE:    start a grandchild ("sleep FILE.grand"), write both pids
//	              to FILE, then sleep;
//	sleep FILE:   write its pid to FILE, then sleep;
//	console:      print whether it has a console window, and its env.
func testChild(mode string) int {
	kind, file, _ := strings.Cut(mode, " ")
	switch kind {
	case "tree":
		exe, _ := os.Executable()
		grand := filepath.Join(filepath.Dir(file), "grand.pid")
		var p *os.Process
		err := winetest.Start(nil, func() (err error) {
			p, err = os.StartProcess(exe, []string{exe}, &os.ProcAttr{
				Env:   append(os.Environ(), childEnv+"=sleep "+grand),
				Files: []*os.File{nil, os.Stdout, os.Stderr},
			})
			return err
		})
		if err != nil {
			fmt.Println("start grandchild:", err)
			return 2
		}
		for i := 0; i < 6000; i++ { // a minute
			if _, err := os.Stat(grand); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = os.WriteFile(file, []byte(fmt.Sprintf("%d %d", os.Getpid(), p.Pid)), 0o644)
		time.Sleep(time.Minute)
	case "sleep":
		_ = os.WriteFile(file, []byte(strconv.Itoa(os.Getpid())), 0o644)
		time.Sleep(time.Minute)
	case "console":
		hwnd, _, _ := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleWindow").Call()
		fmt.Printf("window=%v\n", hwnd != 0)
		for _, k := range []string{"SystemRoot", "PATH", "NoDefaultCurrentDirectoryInExePath", "OPENAI_API_KEY"} {
			fmt.Printf("%s=%s\n", k, os.Getenv(k))
		}
	case "exit":
		n, _ := strconv.Atoi(file)
		return n
	}
	return 0
}

func selfSpec(t *testing.T, mode string) CommandSpec {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return CommandSpec{Command: exe, Cwd: t.TempDir(), Env: map[string]string{childEnv: mode}}
}

// alive reports whether process pid is still running.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

// start is term.Start, tried again where Wine failed to start the
// process (winetest.Start).
func start(t *testing.T, term *LocalTerminal, spec CommandSpec) *Process {
	t.Helper()
	var p *Process
	require.NoError(t, winetest.Start(t.Logf, func() (err error) {
		p, err = term.Start(context.Background(), spec)
		return err
	}))
	return p
}

// run is term.Run, tried again where Wine failed to start the process.
func run(t *testing.T, term *LocalTerminal, spec CommandSpec) CommandResult {
	t.Helper()
	var res CommandResult
	require.NoError(t, winetest.Start(t.Logf, func() (err error) {
		res, err = term.Run(context.Background(), spec, nil)
		return err
	}))
	return res
}

// readWhenWritten is the content of the file at path once it has some,
// or "" if p ends first (without it, after a last look).
func readWhenWritten(t *testing.T, p *Process, path string) string {
	t.Helper()
	for {
		select {
		case <-p.Done():
			data, _ := os.ReadFile(path)
			return string(data)
		case <-time.After(20 * time.Millisecond):
		}
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			return string(data)
		}
	}
}

// A killed command takes its whole process tree with it: the grandchild
// it started is in the same Job Object, which the kill terminates.
func TestWindowsKillEndsTheWholeTree(t *testing.T) {
	for _, how := range []string{"kill", "timeout", "close"} {
		t.Run(how, func(t *testing.T) {
			// The timeout has to fire after the tree has started, which
			// takes seconds under Wine on a loaded machine: a run whose
			// timeout came first shows nothing and is made again with
			// twice the time.
			for timeout := 5 * time.Second; ; timeout *= 2 {
				if killTree(t, how, timeout) || t.Failed() {
					return
				}
				require.Less(t, timeout, time.Minute, "the tree never started within its timeout")
				t.Logf("the %s timeout fired before the tree had started: again with %s", timeout, 2*timeout)
			}
		})
	}
}

// killTree starts the tree command, ends it how (kill, timeout after
// timeout, close of the terminal) and checks that the command and the
// grandchild are gone. It reports false, having checked nothing, when the
// timeout fired before the tree had started.
func killTree(t *testing.T, how string, timeout time.Duration) bool {
	term := NewLocalTerminal(TerminalOptions{})
	defer term.Close()
	spec := selfSpec(t, "")
	pids := filepath.Join(spec.Cwd, "tree.pid")
	spec.Env[childEnv] = "tree " + pids
	if how == "timeout" {
		spec.Timeout = timeout
	}
	p := start(t, term, spec)
	defer p.Release()
	written := readWhenWritten(t, p, pids)
	if written == "" {
		<-p.Done()
		st := p.Status()
		require.True(t, how == "timeout" && st != nil && st.TimedOut, "the tree command ended before it wrote its pids: %+v", st)
		return false
	}
	var child, grand int
	_, err := fmt.Sscan(written, &child, &grand)
	require.NoError(t, err)
	// Wine's process table can lag the pid file under load.
	require.Eventually(t, func() bool { return alive(grand) }, 30*time.Second, 20*time.Millisecond, "the grandchild runs")
	switch how {
	case "kill":
		require.NoError(t, p.Kill())
	case "close":
		require.NoError(t, term.Close())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := p.Wait(ctx)
	require.NoError(t, err)
	require.NotNil(t, st.ExitCode)
	assert.Equal(t, how == "timeout", st.TimedOut)
	require.Eventually(t, func() bool { return !alive(child) }, 30*time.Second, 20*time.Millisecond, "the command is gone")
	require.Eventually(t, func() bool { return !alive(grand) }, 30*time.Second, 20*time.Millisecond, "the grandchild is gone with its job")
	require.NoError(t, p.Release())
	require.NoError(t, term.Close())
	return true
}

// Commands pop up no console window (CREATE_NO_WINDOW).
func TestWindowsCommandsGetNoConsoleWindow(t *testing.T) {
	winetest.NeedsRealWindows(t, "its consoles have no window either way, so CREATE_NO_WINDOW cannot be observed")
	term := NewLocalTerminal(TerminalOptions{})
	defer term.Close()
	res := run(t, term, selfSpec(t, "console"))
	assert.Contains(t, res.Output, "window=false", "CREATE_NO_WINDOW: no console window")
}

// Commands get a Windows environment they can start with, and none of
// the agent's secrets; their exit code is reported.
func TestWindowsCommandsGetAWindowsEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	term := NewLocalTerminal(TerminalOptions{})
	defer term.Close()
	res := run(t, term, selfSpec(t, "console"))
	require.NotNil(t, res.ExitCode, res.Output)
	assert.Equal(t, 0, *res.ExitCode)
	assert.Contains(t, res.Output, "SystemRoot="+os.Getenv("SystemRoot"))
	assert.Contains(t, res.Output, "NoDefaultCurrentDirectoryInExePath=1")
	assert.Contains(t, res.Output, "OPENAI_API_KEY=\n", "secrets are not inherited")

	res = run(t, term, selfSpec(t, "exit 7"))
	require.NotNil(t, res.ExitCode)
	assert.Equal(t, 7, *res.ExitCode)
}

// cmd.exe gets its command line exactly as given (CmdLine), quotes,
// ampersands and spaces included; Go's quoting of Args would break it.
func TestWindowsCmdLineIsPassedAsTyped(t *testing.T) {
	cmdExe := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	if _, err := os.Stat(cmdExe); err != nil {
		t.Skip("no cmd.exe")
	}
	dir := filepath.Join(t.TempDir(), "dir with spaces")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a b.txt"), []byte("inside\r\n"), 0o644))
	term := NewLocalTerminal(TerminalOptions{})
	defer term.Close()
	line := `type "a b.txt" & echo "two words" & exit 3`
	res := run(t, term, CommandSpec{
		Command: cmdExe, Args: []string{"/d", "/s", "/c", line}, Cwd: dir,
		CmdLine: `cmd.exe /d /s /c "` + line + `"`,
	})
	assert.Contains(t, res.Output, "inside")
	assert.Contains(t, res.Output, `"two words"`)
	require.NotNil(t, res.ExitCode, res.Output)
	assert.Equal(t, 3, *res.ExitCode)
}
