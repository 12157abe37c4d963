package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

func requireSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(); !st.Available {
		t.Skip("the kernel cannot confine commands here:", st.Reason)
	}
}

// sandboxSession runs the built binary (sandbox on, full-access mode: no
// question, so only the sandbox stands between a command and the machine)
// with HOME at home, and returns the agent's pid.
func sandboxSession(t *testing.T, model *scriptedModel, dir, home string, args ...string) (*sdk.ClientSideConnection, sdk.SessionId, int) {
	t.Helper()
	return sandboxSessionAs(t, sandboxMode{name: "self", uid: -1, gid: -1}, model, dir, home, args...)
}

// sandboxSessionAs is sandboxSession with the agent run in mode m.
func sandboxSessionAs(t *testing.T, m sandboxMode, model *scriptedModel, dir, home string, args ...string) (*sdk.ClientSideConnection, sdk.SessionId, int) {
	t.Helper()
	return sandboxSessionRoots(t, m, model, dir, nil, home, args...)
}

// sandboxSessionRoots is sandboxSessionAs for a session with additional
// directories (extra).
func sandboxSessionRoots(t *testing.T, m sandboxMode, model *scriptedModel, dir string, extra []string, home string, args ...string) (*sdk.ClientSideConnection, sdk.SessionId, int) {
	t.Helper()
	client := newToolClient(dir, "allow_once")
	cmd := exec.Command(agentBin, append(args, "--model", "openai/test-model", "--mode", "full-access", "--sandbox", "on", "--sandbox-network=false")...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "TMPDIR=" + modeTmp(t, m), "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	asUser(cmd, m)
	conn, sid := startE2EWithRoots(t, cmd, client, dir, extra, sdk.ClientCapabilities{})
	return conn, sid, cmd.Process.Pid
}

// modeTmp is a TMPDIR for an agent run in mode m that the test removes:
// testTmp's, or for another user a directory that user owns (nobody
// cannot reach into the test's own temporary directory).
func modeTmp(t *testing.T, m sandboxMode) string {
	if m.uid < 0 {
		return testTmp(t)
	}
	return userDir(t, m)
}

// dirDigest hashes the paths, modes and contents under dir.
func dirDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", p, info.Mode())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	}))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Issue 14's escape corpus through the built binary: a script in the
// workspace (as a model would write it) tries each escape from inside a
// confined run_command; every case must fail, and the host checks what it
// can see itself (files, the listener, the agent, the grandchild). It
// runs in every mode: as root, and as nobody with masks by mount and in
// the fallback; with masks, the script also creates files beside .git
// and the .env files, which the fallback cannot.
func TestBinarySandboxEscapeCorpus(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { escapeCorpus(t, m, false) })
	}
}

// Issue 29: the same corpus against an additional directory (session/new
// additionalDirectories): the attacked repository, its .git and .env
// files, and the script's working directory are the extra root, while the
// session's cwd is another directory. It is confined like the main root:
// 0 escapes.
func TestBinarySandboxEscapeCorpusInAnAdditionalDirectory(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { escapeCorpus(t, m, true) })
	}
}

// escapeCorpus runs the corpus in dir: the session's cwd, or with
// inExtra an additional directory of a session whose cwd is elsewhere.
func escapeCorpus(t *testing.T, m sandboxMode, inExtra bool) {
	dir, home, outside := userDir(t, m), userDir(t, m), userDir(t, m)
	secrets := map[string]string{
		".ssh/id_rsa": "SSH_SECRET", ".aws/credentials": "AWS_SECRET", ".gnupg/private.key": "GPG_SECRET",
		".netrc": "NETRC_SECRET", ".config/gh/hosts.yml": "GH_SECRET", ".docker/config.json": "DOCKER_SECRET",
		".kube/config": "KUBE_SECRET", ".git-credentials": "GITCRED_SECRET",
		".local/state/acp-agent/sessions/other.jsonl": "SESSION_SECRET", ".config/acp-agent/notes.txt": "CONFIG_SECRET",
	}
	for p, c := range secrets {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(p)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, p), []byte(c+"\n"), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("ORIGINAL"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("ORIGINAL"), 0o644))
	git := exec.Command("git", "init", "-q", dir)
	require.NoError(t, git.Run())
	envSecrets := map[string]string{".env": "CORPUS_ENV_SECRET", "app/.env.local": "CORPUS_APP_ENV_SECRET"}
	for p, c := range envSecrets {
		write(t, filepath.Join(dir, p), "TOKEN="+c+"\n")
	}
	write(t, filepath.Join(dir, "ws.txt"), "workspace\n")
	// Where the script writes its grandchildren's pids: not the root,
	// which the fallback cannot write new files into.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "pids"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "outlink")))
	require.NoError(t, os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(dir, "sshlink")))
	// A sibling of the secret that links to it: granting around .ssh must
	// not grant it again through the link.
	require.NoError(t, os.Symlink(".ssh", filepath.Join(home, "innocent")))

	// A TCP listener the sandbox must not reach, a UDP one, and a Unix
	// socket outside the workspace.
	ln, accepted := countingListener(t)
	port := ln.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer udp.Close()
	var udpGot atomic.Int32
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			udpGot.Add(1)
		}
	}()
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	sockPath := filepath.Join(outside, "agent.sock")
	ul, err := net.Listen("unix", sockPath)
	require.NoError(t, err)
	defer ul.Close()
	var unixGot atomic.Int32
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			unixGot.Add(1)
			c.Close()
		}
	}()

	var cases []string // name<TAB>command: exit status 0 means it escaped
	add := func(name, cmd string) { cases = append(cases, name+"\t"+cmd) }
	writeTargets := map[string]string{
		"home-bashrc": filepath.Join(home, ".bashrc"), "home-new": filepath.Join(home, "planted"),
		"etc": "/etc/acp-sandbox-test", "tmp-outside": "/tmp/acp-sandbox-escape-" + strconv.Itoa(os.Getpid()),
		"var-tmp": "/var/tmp/acp-sandbox-escape", "dev-shm": "/dev/shm/acp-sandbox-escape",
		"outside-dir": filepath.Join(outside, "new"), "outside-victim": filepath.Join(outside, "victim"),
		"usr-local": "/usr/local/bin/acp-sandbox-escape", "via-symlink": filepath.Join(dir, "outlink", "vialink"),
		"via-dotdot": filepath.Join(dir, "..", filepath.Base(outside), "viadotdot"), "proc-root": "/proc/self/root" + filepath.Join(outside, "viaproc"),
		"git-hook": filepath.Join(dir, ".git", "hooks", "pre-commit"), "git-config": filepath.Join(dir, ".git", "config"),
	}
	for _, target := range writeTargets {
		if !strings.HasPrefix(target, dir) && !strings.HasPrefix(target, home) && !strings.HasPrefix(target, outside) {
			// Machine-wide targets: a leftover of an unconfined run would
			// make touch succeed (timestamps are not confined).
			for _, suffix := range []string{"", ".d", ".lnk"} {
				_ = os.RemoveAll(target + suffix)
			}
		}
	}
	for name, target := range writeTargets {
		q := strconv.Quote(target)
		add("write-redirect-"+name, "echo pwned > "+q)
		add("write-append-"+name, "echo pwned >> "+q)
		if name == "home-bashrc" || name == "outside-victim" || name == "git-config" {
			// Landlock does not govern timestamps (touch of an existing
			// file succeeds, documented); truncating is a write.
			add("write-truncate-"+name, "truncate -s 0 "+q)
		} else {
			add("write-touch-"+name, "touch "+q)
		}
		add("write-cp-"+name, "cp ws.txt "+q)
		add("write-python-"+name, "python3 -c 'import sys; open(sys.argv[1],\"a\").write(\"pwned\")' "+q)
		add("write-mkdir-"+name, "mkdir "+q+".d")
		add("write-symlink-"+name, "ln -s /etc/passwd "+q+".lnk")
	}
	add("hardlink-outside-into-ws", "ln "+strconv.Quote(filepath.Join(outside, "victim"))+" hl && echo pwned > hl")
	add("rename-git-head", "mv .git/HEAD .git/HEAD.old")
	add("remove-git-index", "rm -f .git/description")
	add("mkdir-git-hooks", "mkdir .git/hooks/x")
	add("rename-into-git", "echo x > into-git && mv into-git .git/into-git && test -e .git/into-git")
	add("link-into-git", "echo x > link-git && ln link-git .git/link-git")
	add("rename-git-itself", "mv .git git-moved")
	add("umount-git", "python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); sys.exit(0 if l.umount2(b\".git\", 2)==0 else 1)'")
	// The workspace's .env files.
	env := func(name, cmd string) { add("read-env-"+name, cmd+" 2>/dev/null | grep -q CORPUS_") }
	env("cat", "cat .env app/.env.local")
	env("cp", "cp .env env-copy && cat env-copy")
	env("hardlink", "ln .env env-hard && cat env-hard")
	env("symlink", "ln -s .env env-soft && cat env-soft")
	env("rename", "mv .env env-moved; cat env-moved")
	env("dir-rename", "mv app app-moved; cat app-moved/.env.local")
	env("chmod", "chmod 644 .env; cat .env")
	env("umount", "python3 -c 'import ctypes; l=ctypes.CDLL(None); l.umount2(b\".env\", 2)'; cat .env")
	env("opath-fd", "python3 -c 'import os; fd=os.open(\".env\", os.O_PATH); print(open(\"/proc/self/fd/%d\" % fd).read())'")
	env("proc-agent-root", "cat /proc/$AGENT_PID/root$PWD/.env")
	env("proc-helper-root", "for p in /proc/[0-9]*; do grep -qa __acp-agent-sandbox $p/cmdline 2>/dev/null && cat $p/root$PWD/.env $p/cwd/.env; done")
	env("proc-any-root", "for p in /proc/[0-9]*; do cat $p/root$PWD/.env; done")
	env("grep-r", "grep -r --exclude=attack.sh TOKEN= .")
	for p, secret := range secrets {
		q := strconv.Quote(filepath.Join(home, p))
		add("read-cat-"+p, "cat "+q+" | grep -q "+secret)
		add("read-python-"+p, "python3 -c 'import sys; print(open(sys.argv[1]).read())' "+q+" | grep -q "+secret)
		add("read-cp-"+p, "cp "+q+" stolen && grep -q "+secret+" stolen")
	}
	add("read-via-symlink", "cat sshlink/id_rsa | grep -q SSH_SECRET")
	add("read-via-home-symlink-sibling", "cat "+strconv.Quote(filepath.Join(home, "innocent", "id_rsa"))+" | grep -q SSH_SECRET")
	add("read-agent-environ", "grep -q OPENAI_API_KEY /proc/$AGENT_PID/environ")
	add("read-agent-mem", "head -c 1 /proc/$AGENT_PID/mem")
	add("read-agent-cmdline-fd", "ls -l /proc/$AGENT_PID/fd/ | grep -q socket")
	add("read-agent-cwd", "ls /proc/$AGENT_PID/cwd/")
	add("list-ssh", "ls "+strconv.Quote(filepath.Join(home, ".ssh"))+" | grep -q id_rsa")
	add("tcp-bash", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port))
	add("tcp-python", fmt.Sprintf("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", %d), 2)'", port))
	add("tcp-curl", fmt.Sprintf("curl -s -m 2 http://127.0.0.1:%d/", port))
	add("udp-python", fmt.Sprintf("python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"127.0.0.1\", %d))'", udpPort))
	add("tcp-bind", "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()'")
	add("unix-socket-outside", "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "+strconv.Quote(sockPath))
	add("ipv6-python", "python3 -c 'import socket; socket.socket(socket.AF_INET6)'")
	add("ptrace-agent", "python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); sys.exit(0 if l.ptrace(16, int(sys.argv[1]), 0, 0)==0 else 1)' $AGENT_PID")
	add("ptrace-strace", "strace -p $AGENT_PID -o /dev/null & sleep 0.5; kill -0 $! && wait $!")
	add("ptrace-gdb", "gdb -p $AGENT_PID -batch -ex 'info registers' 2>&1 | grep -q rip")
	add("process-vm-readv", "python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); sys.exit(0 if l.process_vm_readv(int(sys.argv[1]),0,0,0,0,0)>=0 else 1)' $AGENT_PID")
	add("signal-agent-term", "kill -TERM $AGENT_PID")
	add("signal-agent-zero", "kill -0 $AGENT_PID")
	add("signal-agent-stop", "kill -STOP $AGENT_PID")
	add("signal-init", "kill -0 1")

	var script strings.Builder
	script.WriteString("#!/bin/bash\n")
	// New files beside .git and the .env files: with masks they can be
	// made; in the fallback, not.
	creates := map[string]string{"file-in-git-root": "touch created-in-root", "dir-in-git-root": "mkdir dir-in-root",
		"file-beside-env": "touch app/created-beside-env", "dir-beside-env": "mkdir app/dir-beside-env"}
	for name, c := range creates {
		fmt.Fprintf(&script, "( %s ) >/dev/null 2>&1 && echo \"CREATE %s yes\" || echo \"CREATE %s no\"\n", c, name, name)
	}
	for i, c := range cases {
		name, cmd, _ := strings.Cut(c, "\t")
		fmt.Fprintf(&script, "( %s ) >/dev/null 2>&1 </dev/null && echo \"RESULT %d %s ESCAPED\" || echo \"RESULT %d %s blocked\"\n", cmd, i, name, i, name)
	}
	// Grandchildren that try to outlive the command.
	script.WriteString("setsid sleep 300 & echo $! > pids/grandchild1.pid\n")
	script.WriteString("( sleep 301 & echo $! > pids/grandchild2.pid ) \n")
	script.WriteString("nohup setsid sleep 302 >/dev/null 2>&1 & echo $! > pids/grandchild3.pid\n")
	script.WriteString("echo CORPUS-DONE\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "attack.sh"), []byte(script.String()), 0o755))

	// 171 commands (many of them python3) in one: minutes on a loaded
	// machine, so the turn gets what is left of the test's time, and the
	// command all but the last 30 s of that.
	budget := testBudget(t)
	cwd, run := dir, map[string]any{"command": "bash attack.sh", "timeout_seconds": max(int(budget.Seconds())-30, 60)}
	var extra []string
	if inExtra {
		cwd, extra = userDir(t, m), []string{dir}
		run["cwd"] = dir
		write(t, filepath.Join(cwd, "main.txt"), "main\n")
	}
	for _, d := range []string{dir, home, outside, cwd} {
		chownTree(t, m, d)
	}
	gitBefore := dirDigest(t, filepath.Join(dir, ".git"))
	model := promptModel(t, map[string][]modelCall{"[go]": {{"run_command", run}}})
	conn, sid, agentPid := sandboxSessionRoots(t, m, model, cwd, extra, home)
	script2 := strings.ReplaceAll(script.String(), "$AGENT_PID", strconv.Itoa(agentPid))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "attack.sh"), []byte(script2), 0o755))
	chownTree(t, m, filepath.Join(dir, "attack.sh"))
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2EWithin(t, conn, sid, "[go]", budget))

	body := model.body(t, 1)
	require.Contains(t, body, "CORPUS-DONE", "the script ran to the end")
	results := regexp.MustCompile(`RESULT (\d+) (\S+) (ESCAPED|blocked)`).FindAllStringSubmatch(body, -1)
	require.Len(t, results, len(cases), "one result per case")
	escapes := 0
	for _, r := range results {
		if r[3] == "ESCAPED" {
			escapes++
			t.Errorf("escape: %s", r[2])
		}
	}
	for _, s := range secrets {
		assert.False(t, strings.Contains(body, s), "the model saw %s", s)
	}
	for _, s := range envSecrets {
		assert.False(t, strings.Contains(body, s), "the model saw %s", s)
	}
	created := regexp.MustCompile(`CREATE (\S+) (yes|no)`).FindAllStringSubmatch(body, -1)
	require.Len(t, created, len(creates))
	for _, c := range created {
		if m.masks {
			assert.Equal(t, "yes", c[2], "%s: with masks by mount a file can be made beside .git or a .env (mode %s)", c[1], m.name)
		} else {
			assert.Equal(t, "no", c[2], "%s: the fallback's limit", c[1])
		}
	}
	if m.masks {
		assert.FileExists(t, filepath.Join(dir, "created-in-root"))
		assert.FileExists(t, filepath.Join(dir, "app", "created-beside-env"))
	}
	// What the host sees.
	assert.Equal(t, gitBefore, dirDigest(t, filepath.Join(dir, ".git")), ".git changed")
	for p, c := range envSecrets {
		data, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err, "%s is gone", p)
		assert.Equal(t, "TOKEN="+c+"\n", string(data))
	}
	data, _ := os.ReadFile(filepath.Join(outside, "victim"))
	assert.Equal(t, "ORIGINAL", string(data))
	data, _ = os.ReadFile(filepath.Join(home, ".bashrc"))
	assert.Equal(t, "ORIGINAL", string(data))
	for name, target := range writeTargets {
		if name == "outside-victim" || name == "home-bashrc" || name == "git-config" {
			continue
		}
		assert.NoFileExists(t, target, "%s was written", name)
	}
	assert.NoFileExists(t, filepath.Join(dir, ".git", "hooks", "pre-commit"))
	assert.Zero(t, accepted.Load(), "the TCP listener was reached")
	assert.Zero(t, udpGot.Load(), "the UDP listener got a datagram")
	assert.Zero(t, unixGot.Load(), "the Unix socket outside was reached")
	assert.True(t, processAlive(agentPid), "the agent is alive")
	for _, f := range []string{"grandchild1.pid", "grandchild2.pid", "grandchild3.pid"} {
		data, err := os.ReadFile(filepath.Join(dir, "pids", f))
		require.NoError(t, err, f)
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		require.NoError(t, err)
		assert.Eventually(t, func() bool { return !processAlive(pid) }, waitBudget(t), 50*time.Millisecond,
			"%s (pid %d) outlived the command", f, pid)
	}
	t.Logf("sandbox escape corpus (%s): %d cases, %d escapes (plus 3 grandchildren, the agent, 3 listeners checked from outside)", m.name, len(cases), escapes)
}

// Issue 14: the ordinary workflow works inside the sandbox: go build and
// go test of a small module with its build cache, git status/diff/log,
// npm test of a tiny package, a Python script, make; and, in a git root
// where the sandbox masks by mount, new files and directories at the top
// (npm init, mkdir build). As root, and as nobody with masks and in the
// fallback (where make's output and new top-level files cannot be made,
// the fallback's limit); as nobody without the Go step, whose build cache
// would start cold.
func TestBinarySandboxOrdinaryWorkflow(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { ordinaryWorkflow(t, m) })
	}
}

func ordinaryWorkflow(t *testing.T, m sandboxMode) {
	// The real HOME: its Go build cache is warm (and writable inside, as
	// a toolchain cache); sessions go to a temporary directory.
	dir, home := userDir(t, m), os.Getenv("HOME")
	if m.uid >= 0 {
		home = userDir(t, m)
	}
	if home == "" {
		t.Skip("no HOME")
	}
	w := func(p, c string) { require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)) }
	w("go.mod", "module example.com/tiny\n\ngo 1.22\n")
	w("tiny.go", "package tiny\n\nfunc Add(a, b int) int { return a + b }\n")
	w("tiny_test.go", "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n")
	w("package.json", `{"name":"tiny","version":"1.0.0","scripts":{"test":"node check.js"}}`)
	w("check.js", "if (1 + 1 !== 2) process.exit(1); console.log('NODE-OK');\n")
	w("script.py", "import os, tempfile\nwith tempfile.NamedTemporaryFile() as f: f.write(b'x')\nprint('PY-OK')\n")
	w("Makefile", "all:\n\techo MAKE-OK > made.txt\n\tcat made.txt\n")
	w(".env", "TOKEN=WORKFLOW_ENV_SECRET\n")
	w(".gitignore", ".env\n")
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "first"}} {
		// The test's git may not own the directory (nobody does).
		git := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...)
		git.Dir = dir
		out, err := git.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	w("tiny.go", "package tiny\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n")
	chownTree(t, m, dir)
	goBin := "/usr/local/go/bin/go"
	steps := map[string]string{
		"[git]":    "git status --short && git diff --stat && git log --oneline && echo GIT-OK",
		"[npm]":    "npm test",
		"[python]": "python3 script.py",
		"[make]":   "make",
		"[create]": "mkdir build && echo x > build/out && touch NOTES.md && mkdir -p node_modules/tiny && echo CREATE-OK",
	}
	order := []string{"[git]", "[npm]", "[python]", "[make]", "[create]"}
	if _, err := os.Stat(goBin); err == nil && m.uid < 0 {
		steps["[go]"] = goBin + " build ./... && " + goBin + " test ./... && echo GO-OK"
		order = append([]string{"[go]"}, order...)
	}
	calls := map[string][]modelCall{}
	for k, c := range steps {
		calls[k] = []modelCall{{"run_command", map[string]any{"command": c, "timeout_seconds": 300}}}
	}
	model := promptModel(t, calls)
	conn, sid, _ := sandboxSessionAs(t, m, model, dir, home, "--session-dir", userDir(t, m))
	want := map[string]string{"[go]": "GO-OK", "[git]": "GIT-OK", "[npm]": "NODE-OK", "[python]": "PY-OK", "[make]": "MAKE-OK", "[create]": "CREATE-OK"}
	for i, k := range order {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(k)}})
		cancel()
		require.NoError(t, err)
		assert.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
		body := model.body(t, 2*i+1)
		assert.NotContains(t, body, "WORKFLOW_ENV_SECRET")
		if !m.masks && (k == "[make]" || k == "[create]") {
			// The fallback's limit: nothing new directly in a git root.
			assert.NotContains(t, body, want[k]+`\n`, "%s made a file at the top of a git root in the fallback", k)
			continue
		}
		assert.True(t, strings.Contains(body, want[k]), "%s did not work inside the sandbox (mode %s): %s", k, m.name, tail(body, 1500))
	}
	if m.masks {
		assert.FileExists(t, filepath.Join(dir, "build", "out"))
		assert.FileExists(t, filepath.Join(dir, "made.txt"))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// startE2E starts cmd (the built agent) and a session for client in its
// dir.
func startE2E(t *testing.T, cmd *exec.Cmd, client *toolClient, caps sdk.ClientCapabilities) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	return startE2EWith(t, cmd, client, client.dir, caps)
}

// Issue 14 escalation through the built binary: a confined command that
// the sandbox stops comes back "blocked by the sandbox"; asking to run it
// outside always asks the user, even in full-access mode, with the
// justification in the title and only allow-once or reject; it is never
// remembered. With sandbox.autoApprove, confined commands run without a
// question in the default mode while escalations still ask.
func TestBinarySandboxEscalationAlwaysAsks(t *testing.T) {
	requireSandbox(t)
	dir, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "made")
	model := promptModel(t, map[string][]modelCall{
		"[inside]":   {{"run_command", map[string]any{"command": "touch " + target}}},
		"[escalate]": {{"run_command", map[string]any{"command": "touch " + target, "outside_sandbox": true, "justification": "it writes the shared cache"}}},
		"[nojust]":   {{"run_command", map[string]any{"command": "touch " + target, "outside_sandbox": true}}},
		"[plain]":    {{"run_command", map[string]any{"command": "touch inside.txt"}}},
	})
	client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_once"}
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "full-access", "--sandbox", "on")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})

	promptE2E(t, conn, sid, "[inside]")
	assert.NoFileExists(t, target)
	assert.Contains(t, model.body(t, 1), "[blocked by the sandbox: ", "the model learns why")
	assert.Zero(t, client.asked(), "full-access asks nothing for a confined command")

	promptE2E(t, conn, sid, "[nojust]")
	assert.NoFileExists(t, target, "an escalation needs a justification")
	assert.Zero(t, client.asked())

	promptE2E(t, conn, sid, "[escalate]")
	require.Equal(t, 1, client.asked(), "an escalation asks, even in full-access mode")
	client.toolClient.mu.Lock()
	req := client.toolClient.permissions[0]
	client.toolClient.mu.Unlock()
	assert.Contains(t, *req.ToolCall.Title, "Outside the sandbox")
	assert.Contains(t, *req.ToolCall.Title, "it writes the shared cache")
	var kinds []string
	for _, o := range req.Options {
		kinds = append(kinds, string(o.Kind))
	}
	assert.Equal(t, []string{"allow_once", "reject_once"}, kinds, "nothing to remember")
	assert.FileExists(t, target, "allowed once, it ran outside")
	require.NoError(t, os.Remove(target))

	client.setAnswer("reject_once")
	promptE2E(t, conn, sid, "[escalate]")
	assert.Equal(t, 2, client.asked(), "asked again: never remembered")
	assert.NoFileExists(t, target)

	t.Run("auto-approve", func(t *testing.T) {
		client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "reject_once"}
		cmd := exec.Command(agentBin, "--model", "openai/test-model", "--sandbox", "on", "--sandbox-auto-approve")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
		conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})
		promptE2E(t, conn, sid, "[plain]")
		assert.Zero(t, client.asked(), "a confined command runs without a question")
		assert.FileExists(t, filepath.Join(dir, "inside.txt"))
		promptE2E(t, conn, sid, "[escalate]")
		assert.Equal(t, 1, client.asked(), "an escalation still asks")
		assert.NoFileExists(t, target, "rejected")
	})
}

// startE2EWith starts cmd (the built agent), connects client with caps and
// opens a session in dir.
func startE2EWith(t *testing.T, cmd *exec.Cmd, client sdk.Client, dir string, caps sdk.ClientCapabilities) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	return startE2EWithRoots(t, cmd, client, dir, nil, caps)
}

// startE2EWithRoots is startE2EWith for a session with additional
// directories (extra).
func startE2EWithRoots(t *testing.T, cmd *exec.Cmd, client sdk.Client, dir string, extra []string, caps sdk.ClientCapabilities) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	var stderr syncWriter
	log := sdkLog(t)
	cmd, stdin, stdout := startPiped(t, cmd, &stderr)
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !errors.As(err, &ee) || !ok || !ws.Signaled() {
				t.Errorf("agent exited with %v after stdin EOF", err)
			}
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", tail(stderr.String(), 4000))
		}
	})
	conn := sdk.NewClientSideConnection(client, stdin, stdout)
	conn.SetLogger(log)
	ctx := waitCtx(t)
	_, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	require.NoError(t, err)
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, AdditionalDirectories: extra, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	return conn, sess.SessionId
}

// countingListener is a loopback TCP listener that counts the
// connections it accepted; it closes with the test.
func countingListener(t *testing.T) (net.Listener, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	accepted := new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln, accepted
}

// Issue 14: with the network not configured, confined commands reach it in
// full-access mode only; configured off, not even there. Issue 24 pins
// accept-edits too (asked and allowed, or auto-approved).
func TestBinarySandboxNetworkFollowsTheMode(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ln, accepted := countingListener(t)
	line := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", ln.Addr().(*net.TCPAddr).Port)
	model := promptModel(t, map[string][]modelCall{"[net]": {{"run_command", map[string]any{"command": line}}}})
	for _, tc := range []struct {
		name  string
		args  []string
		reach bool
	}{
		{"full-access", []string{"--mode", "full-access"}, true},
		{"full-access, network configured off", []string{"--mode", "full-access", "--sandbox-network=false"}, false},
		{"default mode, auto-approved", []string{"--sandbox-auto-approve"}, false},
		{"accept-edits mode", []string{"--mode", "accept-edits"}, false},
		{"accept-edits mode, auto-approved", []string{"--mode", "accept-edits", "--sandbox-auto-approve"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := accepted.Load()
			dir := t.TempDir()
			client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_once"}
			cmd := exec.Command(agentBin, append([]string{"--model", "openai/test-model", "--sandbox", "on"}, tc.args...)...)
			cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
			conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})
			promptE2E(t, conn, sid, "[net]")
			if tc.reach {
				assert.Eventually(t, func() bool { return accepted.Load() > before }, waitBudget(t), 20*time.Millisecond, "full-access reaches the network")
			} else {
				time.Sleep(100 * time.Millisecond)
				assert.Equal(t, before, accepted.Load(), "the network was reached")
			}
		})
	}
}

// Issue 24 item 7 through the built binary: with --sandbox-auto-approve,
// confined commands run without a question, and the workspace's .env and
// .env.* files at any depth stay unreadable to them (the file tools refuse
// them too), however the command reaches them.
func TestBinarySandboxAutoApproveNeverReadsEnvFiles(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { autoApproveNeverReadsEnvFiles(t, m) })
	}
}

func autoApproveNeverReadsEnvFiles(t *testing.T, m sandboxMode) {
	dir, home := userDir(t, m), userDir(t, m)
	secrets := map[string]string{".env": "ROOT_ENV_SECRET", "api/.env.local": "API_ENV_SECRET", "deploy/prod/.env.production": "PROD_ENV_SECRET"}
	for p, c := range secrets {
		write(t, filepath.Join(dir, p), "TOKEN="+c+"\n")
	}
	write(t, filepath.Join(dir, ".env.example"), "TOKEN=placeholder-TEMPLATE\n")
	chownTree(t, m, dir)
	line := "cat .env api/.env.local deploy/prod/.env.production; grep -r TOKEN . ; " +
		"python3 -c 'import glob; [print(open(f).read()) for f in glob.glob(\"**/.env*\", recursive=True, include_hidden=True)]'; " +
		"tar cf - . | tar tvf - >/dev/null; cp api/.env.local api/copied && cat api/copied; echo RAN-TO-THE-END"
	model := promptModel(t, map[string][]modelCall{"[env]": {{"run_command", map[string]any{"command": line}}}})
	client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "reject_once"}
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--sandbox", "on", "--sandbox-auto-approve")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	asUser(cmd, m)
	conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})
	promptE2E(t, conn, sid, "[env]")
	assert.Zero(t, client.asked(), "auto-approved: the command ran without a question")
	body := model.body(t, 1)
	require.Contains(t, body, "RAN-TO-THE-END")
	assert.Contains(t, body, "TEMPLATE", "a template is no secret")
	for _, c := range secrets {
		assert.NotContains(t, body, c, "a confined command read a secrets file")
	}
}
