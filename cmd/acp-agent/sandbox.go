package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/runtime"
	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// sandboxFile is the config file's "sandbox" member.
type sandboxFile struct {
	// Mode: "auto" (confine where the kernel can, say so where it cannot),
	// "on" (the same, named explicitly) or "off".
	Mode           string `json:"mode"`
	Network        *bool  `json:"network"`
	AllowGitWrites *bool  `json:"allowGitWrites"`
	// AutoApprove lets confined commands run without asking in the
	// default and accept-edits modes; escalations still ask.
	AutoApprove   *bool    `json:"autoApprove"`
	ExtraWritable []string `json:"extraWritable"`
	DeniedPaths   []string `json:"deniedPaths"`
	// ProtectedPaths are more paths no confined command and no file tool
	// may write (protectedPaths); ProtectStartupFiles false drops the
	// default list (sandbox.DefaultProtectedPaths).
	ProtectedPaths      []string `json:"protectedPaths"`
	ProtectStartupFiles *bool    `json:"protectStartupFiles"`
}

type sandboxFlags struct {
	mode        *string
	network     *bool
	autoApprove *bool
}

func addSandboxFlags(fs *flag.FlagSet, getenv func(string) string) sandboxFlags {
	return sandboxFlags{
		mode: fs.String("sandbox", getenv("ACP_AGENT_SANDBOX"), "confine local commands with Landlock and seccomp: auto, on or off (env ACP_AGENT_SANDBOX; default auto; docs/security.md)"),
		network: fs.Bool("sandbox-network", envBool(getenv, "ACP_AGENT_SANDBOX_NETWORK"),
			"let confined commands use the network in every mode; =false: in none (env ACP_AGENT_SANDBOX_NETWORK; default: in full-access mode only)"),
		autoApprove: fs.Bool("sandbox-auto-approve", envBool(getenv, "ACP_AGENT_SANDBOX_AUTO_APPROVE"),
			"run confined commands without asking (escalations outside the sandbox still ask; env ACP_AGENT_SANDBOX_AUTO_APPROVE)"),
	}
}

// autoApprove is whether confined commands run without asking.
func (f sandboxFlags) autoApproveSetting(fs *flag.FlagSet, file *sandboxFile, getenv func(string) string) bool {
	v := false
	if file != nil && file.AutoApprove != nil {
		v = *file.AutoApprove
	}
	if isSet(fs, "sandbox-auto-approve") || getenv("ACP_AGENT_SANDBOX_AUTO_APPROVE") != "" {
		v = *f.autoApprove
	}
	return v
}

// resolveSandbox turns flags and file into the workspace's sandbox, or the
// reason commands cannot be confined (sessions then ask for every
// command). Mode off gives neither.
//
// denied is deniedPaths' list, which the file tools keep out of too;
// protected is protectedPaths' list, which the file tools do not write
// either.
func resolveSandbox(f sandboxFlags, fs *flag.FlagSet, file *sandboxFile, getenv func(string) string, sessionDir string, denied, protected []string, log *slog.Logger) (sb *runtime.Sandbox, netInFullAccess bool, unavailable string, err error) {
	if file == nil {
		file = &sandboxFile{}
	}
	mode := "auto"
	if file.Mode != "" {
		mode = file.Mode
	}
	if *f.mode != "" {
		mode = *f.mode
	}
	switch mode {
	case "off":
		return nil, false, "", nil
	case "auto", "on":
	default:
		return nil, false, "", fmt.Errorf("sandbox mode %q: want auto, on or off", mode)
	}
	st := probeSandbox()
	if !st.Available && mode == "auto" && unconfinedByDesign {
		// Windows: there is no sandbox to wait for, and the command
		// policy cannot parse PowerShell, so every command asks anyway
		// unless the user chose full access (platform.go).
		log.Info("commands are not sandboxed on this OS", "reason", st.Reason)
		return nil, false, "", nil
	}
	if !st.Available {
		// Sessions tell the user (a notice when a command asks); the log
		// file keeps the reason.
		log.Info("commands are not sandboxed; every command will ask", "reason", st.Reason)
		return nil, false, st.Reason, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, false, "cannot find the agent's own binary: " + err.Error(), nil
	}
	home := getenv("HOME")
	if home != "" && home != "/" {
		// Toolchains create these on first use, which they could not do
		// from inside the sandbox.
		for _, d := range []string{".cache", ".npm"} {
			_ = os.MkdirAll(filepath.Join(home, d), 0o755)
		}
	}
	p := sandbox.Policy{
		DeniedPaths:    denied,
		ProtectedPaths: protected,
		ExtraWritable:  append(sandbox.DefaultCaches(home), file.ExtraWritable...),
	}
	if sessionDir != "" {
		// Under a denied path, where no command can write it.
		p.SecretsCache = filepath.Join(absPath(sessionDir), secretsCacheDir)
	}
	for _, x := range file.ExtraWritable {
		if !filepath.IsAbs(x) {
			return nil, false, "", fmt.Errorf("sandbox: %q is not an absolute path", x)
		}
	}
	netConfigured := false
	if file.Network != nil {
		p.Network, netConfigured = *file.Network, true
	}
	if isSet(fs, "sandbox-network") || getenv("ACP_AGENT_SANDBOX_NETWORK") != "" {
		p.Network, netConfigured = *f.network, true
	}
	// Not configured: on in full-access mode only (the session's mode
	// when the command runs), off in the others.
	netInFullAccess = !netConfigured
	if file.AllowGitWrites != nil {
		p.AllowGitWrites = *file.AllowGitWrites
	}
	return &runtime.Sandbox{Exe: exe, Policy: p}, netInFullAccess, "", nil
}

// deniedPaths are the paths no confined command and no file tool may
// read or write, one list for both (whether or not commands are
// sandboxed): the user's credentials under home (sandbox.
// DefaultDeniedPaths), the agent's config directory, the session
// directory, the agent's own files (agentPaths: the state directory, the
// log file, serve's token file) and the config's sandbox.deniedPaths,
// which must be absolute. All are absolute: the agent's may be named
// relative to its directory (--session-dir, --log-file, --token-file),
// and the helpers take absolute paths only and would refuse every
// command.
func deniedPaths(file *sandboxFile, getenv func(string) string, sessionDir string, agentPaths []string) ([]string, error) {
	home := userHome(getenv)
	out := sandbox.DefaultDeniedPaths(home)
	if dir := defaultConfigPath(getenv); dir != "" {
		out = append(out, absPath(filepath.Dir(dir)))
	}
	if sessionDir != "" {
		out = append(out, absPath(sessionDir))
	}
	for _, l := range agentPaths {
		out = append(out, absPath(l))
	}
	if file != nil {
		if err := allAbsolute(file.DeniedPaths); err != nil {
			return nil, err
		}
		out = append(out, file.DeniedPaths...)
	}
	return out, nil
}

// protectedPaths are the paths no confined command and no file tool may
// write, create or remove, while both read them: the home directory's
// start-up and configuration files that the user's other programs run
// unconfined (sandbox.DefaultProtectedPaths, under $HOME and
// $XDG_CONFIG_HOME; sandbox.protectStartupFiles false drops them) and the
// config's sandbox.protectedPaths, which must be absolute. HOME is the
// agent's own: it is where the user's shell and git look.
func protectedPaths(file *sandboxFile, getenv func(string) string) ([]string, error) {
	home := userHome(getenv)
	var out []string
	if file == nil || file.ProtectStartupFiles == nil || *file.ProtectStartupFiles {
		out = sandbox.DefaultProtectedPaths(home, getenv("XDG_CONFIG_HOME"), getenv("PATH"))
	}
	if file != nil {
		if err := allAbsolute(file.ProtectedPaths); err != nil {
			return nil, err
		}
		out = append(out, file.ProtectedPaths...)
	}
	return out, nil
}

// userHome is the home directory the agent's environment names
// (USERPROFILE on Windows when HOME is unset).
func userHome(getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" && onWindows {
		home = getenv("USERPROFILE")
	}
	return home
}

// allAbsolute refuses a configured sandbox path that is not absolute.
func allAbsolute(paths []string) error {
	for _, x := range paths {
		if !filepath.IsAbs(x) {
			return fmt.Errorf("sandbox: %q is not an absolute path", x)
		}
	}
	return nil
}

// absPath is x made absolute against the agent's directory (x itself if
// that fails).
func absPath(x string) string {
	if a, err := filepath.Abs(x); err == nil {
		return a
	}
	return x
}

// secretsCacheDir is the directory, under the session directory, where
// the sandbox helpers keep their listing of a workspace's secrets files
// between processes (sandbox.Policy.SecretsCache).
const secretsCacheDir = ".secrets-cache"

// probeSandbox is what the kernel offers (sandbox.Probe), asked once per
// process: resolveSandbox and sandboxNotices both need it at start.
var probeSandbox = sync.OnceValue(sandbox.Probe)

// sandboxNotices are what a session tells the user once about a sandbox
// that confines commands with a limit: where the helpers cannot mask by
// mount (no user namespaces), nothing new can be created directly in a
// directory holding .git or a .env file.
func sandboxNotices(sb *runtime.Sandbox) []acpagent.Notice {
	if sb == nil {
		return nil
	}
	st := probeSandbox()
	if !st.Available || st.Limit == "" {
		return nil
	}
	return []acpagent.Notice{{Severity: host.NoticeWarning, Title: "Commands are sandboxed with a limit",
		Description: "Commands run confined, but " + st.Limit + " (the top of a git repository included): " +
			"the sandbox keeps .git and .env files from commands by leaving such directories without write rights. " +
			"Commands that need to create files there (npm install, go mod init, mkdir build) fail; run them in a subdirectory, " +
			"or enable unprivileged user namespaces. acp-agent doctor says more."}}
}
