package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/runtime"
)

// ProjectHooksFile is where a repository defines hooks, relative to the
// workspace root (same format as the config file's "hooks").
const ProjectHooksFile = ".acp-agent/hooks.json"

const maxProjectHooksBytes = 256 << 10

// trustStore remembers which project hook files the user trusted, by real
// path and SHA-256 of their content, in one JSON file.
type trustStore struct {
	path string // "" keeps nothing: every session asks
	mu   sync.Mutex
}

func (t *trustStore) trusted(file, sum string) bool {
	if t.path == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.readLocked()
	return m[file] == sum
}

func (t *trustStore) trust(file, sum string) error {
	if t.path == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.readLocked()
	m[file] = sum
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}

func (t *trustStore) readLocked() map[string]string {
	m := map[string]string{}
	if data, err := os.ReadFile(t.path); err == nil {
		_ = json.Unmarshal(data, &m)
	}
	return m
}

// projectHooks are the hooks a workspace's ProjectHooksFile defines, for
// one session. They run only once the user trusts what runs: the file's
// exact content and the workspace files its hooks run (pinned:
// hookpin.go), shown in a permission request asked at the first hook's
// run, on the session's worker; a trust is remembered by the SHA-256 of
// all of it and of how the hooks run, so a change asks again. What runs
// is what was shown: the file and the pinned files are read once, at the
// session's start, and the hooks run copies of that content from a
// directory only the agent writes. They run confined by the session's
// sandbox, like its commands, with the commands' environment; a hook
// marked outsideSandbox (or any hook where the sandbox the user asked
// for is unavailable) asks the user every time it runs, like a command's
// escalation.
type projectHooks struct {
	file        string
	data        []byte // the hooks file as read, once
	hooks       []projectHook
	pinned      []*pinnedFile
	sum         string
	confinement string // tools.Workspace.HookConfinement
	refusal     string // why the hooks cannot run, or ""
	perms       agent.PermissionRequester
	store       *trustStore
	ws          hookWorkspace

	once    sync.Once
	allowed bool

	copies  sync.Once
	lines   []string // each hook's line, naming the pinned copies
	copyErr error
}

// projectHook is one hook of the file.
type projectHook struct {
	spec agent.ResolvedHookSpec
	tmpl *pinTemplate
}

// hookWorkspace is what project hooks need of the session's workspace
// (tools.Workspace).
type hookWorkspace interface {
	HookConfinement() string
	HookPath() string
	Writable() []string
	HookPinDir() (string, error)
	RunHook(ctx context.Context, line string, input []byte, outside bool, timeout time.Duration) (tools.HookResult, error)
	Notify(text string)
}

// loadProjectHooks reads cwd's hooks file, if there is one, pins what its
// hooks run and wraps them behind the trust question. A file that is a
// symlink, not regular, too large or not valid is skipped (logged); hooks
// that cannot be pinned, or a session without a workspace to run them
// in, run nothing, and the user is told why.
func (h *Host) loadProjectHooks(cwd string, perms agent.PermissionRequester, ws hookWorkspace) []agent.Hook {
	path := filepath.Join(cwd, ProjectHooksFile)
	data, err := readProjectHooks(path, cwd, h.cfg.Workspace.DeniedPaths)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		h.log.Warn("project hooks not read", "file", path, "error", err)
		return nil
	}
	var spec agent.HooksSpec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		h.log.Warn("project hooks not used", "file", path, "error", err)
		return nil
	}
	specs, err := spec.Resolve()
	if err != nil || len(specs) == 0 {
		if err != nil {
			h.log.Warn("project hooks not used", "file", path, "error", err)
		}
		return nil
	}
	if ws == nil {
		h.log.Warn("project hooks not used: the session has no workspace to run them in", "file", path)
		return nil
	}
	ph := &projectHooks{file: path, data: data, perms: perms, store: &h.trust, ws: ws, confinement: ws.HookConfinement()}
	pin := newPinner(cwd, ws.Writable(), ws.HookPath(), h.cfg.Workspace.DeniedPaths)
	for _, r := range specs {
		t, err := pin.line(r.Spec.Command)
		if err != nil {
			ph.refusal = fmt.Sprintf("the hook %q %v", r.Spec.Command, err)
			break
		}
		ph.hooks = append(ph.hooks, projectHook{spec: r, tmpl: t})
	}
	if ph.refusal != "" {
		h.log.Warn("project hooks not used", "file", path, "reason", ph.refusal)
		ws.Notify(fmt.Sprintf("the hooks in %s do not run: %s", path, ph.refusal))
		return nil
	}
	ph.pinned = pin.sortedFiles()
	ph.sum = ph.digest()
	out := make([]agent.Hook, len(ph.hooks))
	for i, hk := range ph.hooks {
		out[i] = agent.Hook{Event: hk.spec.Event, Tools: hk.spec.Spec.Tools, Run: func(ctx context.Context, in agent.HookInput) (agent.HookOutcome, error) {
			return ph.run(ctx, i, in)
		}}
	}
	return out
}

// readProjectHooks reads a regular file, never through a final symlink,
// under the file tools' rules for the workspace root cwd
// (runtime.ReadWorkspaceFile): a .acp-agent directory that is a symlink
// into ~/.ssh or out of the workspace is not followed.
func readProjectHooks(path, cwd string, denied []string) ([]byte, error) {
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if fi.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New("it is a symlink")
	}
	data, size, err := runtime.ReadWorkspaceFile(path, "", cwd, denied, maxProjectHooksBytes)
	if err == nil && size > maxProjectHooksBytes {
		err = fmt.Errorf("%d bytes, more than %d", size, maxProjectHooksBytes)
	}
	return data, err
}

// digest is what a trust is stored under: the hooks file, every pinned
// file (path and content) and how the hooks run.
func (p *projectHooks) digest() string {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte("acp-agent project hooks 2"))
	field([]byte(p.confinement))
	field(p.data)
	for _, f := range p.pinned {
		field([]byte(f.path))
		field(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// run runs hook i once the hooks are trusted: from the pinned copies,
// confined unless it is marked outsideSandbox (or no sandbox the user
// asked for is available), which asks the user first, every time.
func (p *projectHooks) run(ctx context.Context, i int, in agent.HookInput) (agent.HookOutcome, error) {
	h := p.hooks[i]
	if !p.trusted(ctx) {
		return agent.HookOutcome{}, fmt.Errorf("the hooks in %s are not trusted", p.file)
	}
	lines, err := p.materialize()
	if err != nil {
		return agent.HookOutcome{}, err
	}
	outside := h.spec.Spec.OutsideSandbox || (p.confinement != "confined" && p.confinement != "off")
	if outside && !p.allowOutside(ctx, h) {
		return agent.HookOutcome{}, fmt.Errorf("hook %q: not allowed to run outside the sandbox", h.spec.Spec.Command)
	}
	timeout := h.spec.Timeout
	if timeout <= 0 {
		timeout = agent.DefaultHookTimeout
	}
	data, _ := json.Marshal(in)
	res, err := p.ws.RunHook(ctx, lines[i], data, outside, timeout)
	if err != nil {
		return agent.HookOutcome{}, fmt.Errorf("%s hook %q: %w", h.spec.Event, h.spec.Spec.Command, err)
	}
	if res.TimedOut {
		return agent.HookOutcome{}, fmt.Errorf("%s hook %q: timed out after %v", h.spec.Event, h.spec.Spec.Command, timeout)
	}
	exit, runErr := -1, error(nil)
	if res.ExitCode != nil {
		exit = *res.ExitCode
	} else {
		runErr = errors.New("killed by a signal")
	}
	return agent.HookOutcomeOf(h.spec.Event, h.spec.Spec.Command, res.Stdout, res.Stderr, exit, runErr)
}

// materialize writes the pinned copies once and returns each hook's line
// naming them.
func (p *projectHooks) materialize() ([]string, error) {
	p.copies.Do(func() {
		paths := map[string]string{}
		var dir string
		if len(p.pinned) > 0 {
			if dir, p.copyErr = p.ws.HookPinDir(); p.copyErr != nil {
				return
			}
		}
		for _, f := range p.pinned {
			sum := sha256.Sum256([]byte(f.path))
			paths[f.path] = filepath.Join(dir, hex.EncodeToString(sum[:8]), filepath.Base(f.path))
		}
		for _, f := range p.pinned {
			content := f.data
			if f.tmpl != nil {
				s, err := f.tmpl.render(paths)
				if err != nil {
					p.copyErr = err
					return
				}
				content = []byte(s)
			}
			if p.copyErr = writePinnedCopy(paths[f.path], content); p.copyErr != nil {
				return
			}
		}
		for _, h := range p.hooks {
			line, err := h.tmpl.render(paths)
			if err != nil {
				p.copyErr = err
				return
			}
			p.lines = append(p.lines, line)
		}
	})
	return p.lines, p.copyErr
}

// writePinnedCopy creates path (and its directory) with content, never
// over anything that is there: only the agent writes the pin directory.
func writePinnedCopy(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("pinned copy: %w", err)
	}
	// O_EXCL with O_CREATE never follows a symlink (it fails on one),
	// on Unix and on Windows alike.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return fmt.Errorf("pinned copy: %w", err)
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return fmt.Errorf("pinned copy: %w", err)
	}
	return f.Close()
}

// trusted says whether the hooks may run: remembered for this digest, or
// allowed now by the user (asked once per session; a refusal holds for
// the session).
func (p *projectHooks) trusted(ctx context.Context) bool {
	p.once.Do(func() {
		if p.store.trusted(p.file, p.sum) {
			p.allowed = true
			return
		}
		answer, err := p.perms.RequestPermission(ctx, p.question())
		if err != nil || answer.OptionID != "allow_always" {
			return
		}
		p.allowed = true
		_ = p.store.trust(p.file, p.sum)
	})
	return p.allowed
}

// question is the trust question: the file's exact content and each
// pinned file's, in the content the client shows and in rawInput.
func (p *projectHooks) question() agent.PermissionRequest {
	var how string
	switch p.confinement {
	case "confined":
		how = "They run confined by the sandbox, like commands, with the commands' environment; a hook marked outsideSandbox asks every time it runs."
	case "off":
		how = "The sandbox is off: they run unconfined, with the commands' environment."
	default:
		how = "The sandbox is unavailable here (" + p.confinement + "): every run asks."
	}
	title := fmt.Sprintf("Trust the hooks in %s (sha256 %s)? They are shell commands from the repository. %s", p.file, p.sum, how)
	type pinnedView struct {
		Path    string `json:"path"`
		SHA256  string `json:"sha256"`
		Content string `json:"content"`
	}
	raw := struct {
		File        string       `json:"file"`
		SHA256      string       `json:"sha256"`
		Content     string       `json:"content"`
		Pinned      []pinnedView `json:"pinned"`
		Confinement string       `json:"confinement"`
	}{File: p.file, SHA256: p.sum, Content: shown(p.data), Pinned: []pinnedView{}, Confinement: p.confinement}
	content := []agent.ToolContent{agent.TextContent(p.file + ":\n" + markdown.CodeBlock(shown(p.data)))}
	for _, f := range p.pinned {
		sum := sha256.Sum256(f.data)
		raw.Pinned = append(raw.Pinned, pinnedView{Path: f.path, SHA256: hex.EncodeToString(sum[:]), Content: shown(f.data)})
		content = append(content, agent.TextContent(fmt.Sprintf("%s (run by these hooks; they run this content, pinned):\n%s", f.path, markdown.CodeBlock(shown(f.data)))))
	}
	rawJSON, _ := json.Marshal(raw)
	return agent.PermissionRequest{
		ToolCall: agent.ToolCallUpdate{ID: "project-hooks", Title: title, Kind: agent.ToolKindExecute,
			Status: agent.ToolPending, Content: content, RawInput: rawJSON},
		Options: []agent.PermissionOption{
			{ID: "allow_always", Name: "Trust these hooks (until they change)", Kind: agent.PermissionAllowAlways},
			{ID: "reject_once", Name: "Do not run them", Kind: agent.PermissionRejectOnce},
		},
	}
}

// allowOutside asks the user whether hook h may run outside the sandbox
// now (never remembered).
func (p *projectHooks) allowOutside(ctx context.Context, h projectHook) bool {
	why := h.spec.Spec.Justification
	if why == "" {
		why = "the sandbox is unavailable: " + p.confinement
	}
	answer, err := p.perms.RequestPermission(ctx, agent.PermissionRequest{
		ToolCall: agent.ToolCallUpdate{ID: "project-hook-outside", Title: fmt.Sprintf("Outside the sandbox: hook %s (%s)", markdown.Code(h.spec.Spec.Command), why),
			Kind: agent.ToolKindExecute, Status: agent.ToolPending,
			Content: []agent.ToolContent{agent.TextContent(markdown.CodeBlock(h.spec.Spec.Command))}},
		Options: []agent.PermissionOption{
			{ID: "allow_once", Name: "Allow once, outside the sandbox", Kind: agent.PermissionAllowOnce},
			{ID: "reject_once", Name: "Reject", Kind: agent.PermissionRejectOnce},
		},
	})
	return err == nil && answer.OptionID == "allow_once"
}

// shown is a file's content as the question shows it: the text itself,
// or for binary content its size and hash.
func shown(data []byte) string {
	if utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		return visible(string(data))
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("(binary, %d bytes, sha256 %s)", len(data), hex.EncodeToString(sum[:]))
}

// visible spells out, as <U+XXXX>, the characters that would make text
// display otherwise than it runs ("Trojan Source"): bidi overrides and
// isolates, zero-width and other format characters, and control
// characters but tab, newline and the CR of a CRLF (a terminal escape
// can erase a line, a lone CR overwrite one). What is trusted and run are
// the bytes; this is only what is shown.
func visible(s string) string {
	hidden := func(r rune) bool {
		return unicode.Is(unicode.Cf, r) || (unicode.IsControl(r) && r != '\n' && r != '\t')
	}
	crlf := func(i int) bool { return s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' }
	clean := true
	for i, r := range s {
		if hidden(r) && !crlf(i) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if hidden(r) && !crlf(i) {
			fmt.Fprintf(&b, "<U+%04X>", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
