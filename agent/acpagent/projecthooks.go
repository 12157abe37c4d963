package acpagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
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
// one session: they run only once the user trusts that exact content (a
// permission request naming the file and its hash, asked at the first
// hook's run, on the session's worker); a trust is remembered by hash, so
// a changed file asks again. What runs is what was hashed: the file is
// read once.
type projectHooks struct {
	file, sum string
	conn      *acp.ClientConn
	store     *trustStore

	once    sync.Once
	allowed bool
}

// loadProjectHooks reads cwd's hooks file, if there is one, and wraps its
// hooks behind the trust question. A file that is a symlink, not regular,
// too large or not valid is skipped (logged).
func (a *Agent) loadProjectHooks(cwd string, conn *acp.ClientConn) []agent.Hook {
	path := filepath.Join(cwd, ProjectHooksFile)
	data, err := readProjectHooks(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		a.log.Warn("project hooks not read", "file", path, "error", err)
		return nil
	}
	var spec agent.HooksSpec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		a.log.Warn("project hooks not used", "file", path, "error", err)
		return nil
	}
	hooks, err := spec.Hooks()
	if err != nil || len(hooks) == 0 {
		if err != nil {
			a.log.Warn("project hooks not used", "file", path, "error", err)
		}
		return nil
	}
	sum := sha256.Sum256(data)
	ph := &projectHooks{file: path, sum: hex.EncodeToString(sum[:]), conn: conn, store: &a.trust}
	out := make([]agent.Hook, len(hooks))
	for i, h := range hooks {
		run := h.Run
		h.Run = func(ctx context.Context, in agent.HookInput) (agent.HookOutcome, error) {
			if !ph.trusted(ctx) {
				return agent.HookOutcome{}, fmt.Errorf("the hooks in %s are not trusted", ph.file)
			}
			return run(ctx, in)
		}
		out[i] = h
	}
	return out
}

// readProjectHooks reads a regular file, never through a final symlink.
func readProjectHooks(path string) ([]byte, error) {
	data, size, err := runtime.ReadRegularFile(path, "", maxProjectHooksBytes)
	if err == nil && size > maxProjectHooksBytes {
		err = fmt.Errorf("%d bytes, more than %d", size, maxProjectHooksBytes)
	}
	return data, err
}

// trusted says whether the hooks may run: remembered for this hash, or
// allowed now by the user (asked once per session; a refusal holds for
// the session).
func (p *projectHooks) trusted(ctx context.Context) bool {
	p.once.Do(func() {
		if p.store.trusted(p.file, p.sum) {
			p.allowed = true
			return
		}
		title := fmt.Sprintf("Run the hooks defined in %s (sha256 %s)? They are shell commands from the repository.", p.file, p.sum)
		resp, err := p.conn.RequestPermission(ctx, &acp.RequestPermissionRequest{
			SessionID: acp.SessionId(p.conn.SessionID()),
			ToolCall:  acp.ToolCallUpdate{ToolCallID: "project-hooks", Title: title, Kind: acp.ToolKindExecute, Status: acp.ToolCallStatusPending},
			Options: []acp.PermissionOption{
				{OptionID: "allow_always", Name: "Trust these hooks (until the file changes)", Kind: acp.PermissionOptionKindAllowAlways},
				{OptionID: "reject_once", Name: "Do not run them", Kind: acp.PermissionOptionKindRejectOnce},
			},
		})
		if err != nil || resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionID != "allow_always" {
			return
		}
		p.allowed = true
		_ = p.store.trust(p.file, p.sum)
	})
	return p.allowed
}
