package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
)

// confinedAgent is the agent as serve offers it to remote clients: every
// directory a session works in (cwd and additionalDirectories of
// session/new, load, resume and fork) must be inside one of the --root
// directories once its symbolic links are resolved, and is handed to the
// agent resolved; stdio MCP servers (commands a client would start on
// this machine) are refused unless allowed. A session named by its id
// (load, resume, fork, delete, set_title, status, archive, unarchive)
// must itself work under the roots, as stored (reachable): the session
// directory is shared with the user's other sessions, and one outside
// answers exactly as an unknown id does; session/list shows only those.
// Every other method is the agent's own (embedding keeps the optional
// interfaces the acp.Server looks for).
type confinedAgent struct {
	*acpagent.Agent
	roots         []string // absolute, symbolic links resolved
	allowMCPStdio bool
}

// serveRoots resolves the --root directories (default: the current
// directory).
func serveRoots(given []string) ([]string, error) {
	if len(given) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		given = []string{wd}
	}
	var roots []string
	for _, r := range given {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", r, err)
		}
		if info, err := os.Stat(real); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("--root %s: not a directory", r)
		}
		roots = append(roots, real)
	}
	return roots, nil
}

// confine returns dir resolved, or an invalid-params error naming field
// when it is not inside a root.
func (a *confinedAgent) confine(field, dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: %s: %q is not an absolute path", acp.ErrInvalidParams, field, dir)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return "", fmt.Errorf("%w: %s: %s cannot be used: %v", acp.ErrInvalidParams, field, dir, err)
	}
	if a.inRoots(real) {
		return real, nil
	}
	return "", fmt.Errorf("%w: %s: %s is outside the directories this agent serves (%s)", acp.ErrInvalidParams, field, dir, strings.Join(a.roots, ", "))
}

func (a *confinedAgent) inRoots(real string) bool {
	for _, root := range a.roots {
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// maxParents bounds the walk from a subagent up its parents.
const maxParents = 16

// reachable reports whether session id (live, stored, or started and
// never saved) works under the roots: its cwd and additionalDirectories,
// and for a subagent those of the session that ran it (a child follows
// its parent; a parent that is gone leaves the child to its own).
func (a *confinedAgent) reachable(id string) bool {
	h := a.Agent.Host()
	pl, err := h.LookupSession(id)
	if err != nil {
		return false
	}
	seen := map[string]bool{id: true}
	for range maxParents {
		if !a.placeInRoots(pl) {
			return false
		}
		if !pl.Subagent || pl.ParentSessionID == "" {
			return true
		}
		if seen[pl.ParentSessionID] {
			return false
		}
		seen[pl.ParentSessionID] = true
		if pl, err = h.LookupSession(pl.ParentSessionID); err != nil {
			return true // the parent is gone: the child's own directories decide
		}
	}
	return false
}

// placeInRoots reports whether every directory of pl is inside a root.
func (a *confinedAgent) placeInRoots(pl host.Place) bool {
	for _, d := range append([]string{pl.CWD}, pl.AdditionalDirectories...) {
		if !filepath.IsAbs(d) || !a.inRoots(resolveExisting(d)) {
			return false
		}
	}
	return true
}

// resolveExisting is dir with the symbolic links of its longest existing
// part resolved (a stored session's directory may be gone).
func resolveExisting(dir string) string {
	dir = filepath.Clean(dir)
	rest := ""
	for p := dir; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return dir
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// notFound is the answer to a session id outside the roots: the one an
// unknown id gets.
func notFound(id acp.SessionId) error { return acp.SessionNotFound(id, "") }

// check confines cwd and extra (in place) and refuses stdio MCP servers.
func (a *confinedAgent) check(cwd *string, extra []string, mcps []acp.McpServer) error {
	if cwd != nil {
		real, err := a.confine("cwd", *cwd)
		if err != nil {
			return err
		}
		*cwd = real
	}
	for i := range extra {
		real, err := a.confine(fmt.Sprintf("additionalDirectories[%d]", i), extra[i])
		if err != nil {
			return err
		}
		extra[i] = real
	}
	if !a.allowMCPStdio {
		for i, m := range mcps {
			if m.Stdio != nil {
				return fmt.Errorf("%w: mcpServers[%d]: stdio MCP servers (%q would run a command on the agent's machine) are refused over serve; its operator can allow them with --allow-mcp-stdio", acp.ErrInvalidParams, i, m.Stdio.Name)
			}
		}
	}
	return nil
}

// NewSession implements acp.Agent.
func (a *confinedAgent) NewSession(ctx context.Context, req *acp.NewSessionRequest, client *acp.ClientConn) (acp.Session, *acp.NewSessionResponse, error) {
	r := *req
	r.AdditionalDirectories = append([]string(nil), req.AdditionalDirectories...)
	if err := a.check(&r.CWD, r.AdditionalDirectories, r.MCPServers); err != nil {
		return nil, nil, err
	}
	return a.Agent.NewSession(ctx, &r, client)
}

// LoadSession implements acp.SessionStore (session/load and resume).
func (a *confinedAgent) LoadSession(ctx context.Context, req *acp.LoadRequest, client *acp.ClientConn) (acp.Session, *acp.LoadedSession, error) {
	r := *req
	r.AdditionalDirectories = append([]string(nil), req.AdditionalDirectories...)
	if err := a.check(&r.CWD, r.AdditionalDirectories, r.MCPServers); err != nil {
		return nil, nil, err
	}
	if !a.reachable(r.SessionID) {
		return nil, nil, notFound(r.SessionID)
	}
	return a.Agent.LoadSession(ctx, &r, client)
}

// ForkSession implements acp.Forker. What a fork does not name it takes
// from its source: from a live source that is what was checked when it
// was opened; a source that is not open here must be loaded first.
func (a *confinedAgent) ForkSession(ctx context.Context, req *acp.ForkRequest, source acp.Session, client *acp.ClientConn) (acp.Session, *acp.ForkSessionResponse, error) {
	r := *req
	if source == nil && (r.CWD == "" || r.AdditionalDirectories == nil || r.MCPServers == nil) {
		return nil, nil, fmt.Errorf("%w: session %s is not open: load it (session/load) before forking it, or name cwd, additionalDirectories and mcpServers", acp.ErrInvalidParams, req.SourceID)
	}
	var cwd *string
	if r.CWD != "" {
		cwd = &r.CWD
	}
	if r.AdditionalDirectories != nil {
		r.AdditionalDirectories = append([]string{}, req.AdditionalDirectories...)
	}
	if err := a.check(cwd, r.AdditionalDirectories, r.MCPServers); err != nil {
		return nil, nil, err
	}
	if source == nil && !a.reachable(r.SourceID) {
		return nil, nil, notFound(r.SourceID)
	}
	return a.Agent.ForkSession(ctx, &r, source, client)
}

// ListSessions implements acp.SessionStore: sessions that do not work
// under the roots (reachable) are not shown.
func (a *confinedAgent) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	resp, err := a.Agent.ListSessions(ctx, req)
	if err != nil {
		return nil, err
	}
	kept := resp.Sessions[:0]
	for _, s := range resp.Sessions {
		if a.reachable(string(s.SessionID)) {
			kept = append(kept, s)
		}
	}
	resp.Sessions = kept
	return resp, nil
}

// DeleteSession implements acp.SessionStore. Unlike stdio, where deleting
// an unknown id succeeds, an id that is unknown or outside the roots is
// not found: the two answer alike.
func (a *confinedAgent) DeleteSession(ctx context.Context, id acp.SessionId) error {
	if !a.reachable(id) {
		return notFound(id)
	}
	return a.Agent.DeleteSession(ctx, id)
}

// SetSessionTitle implements acp.SessionManager for sessions under the
// roots.
func (a *confinedAgent) SetSessionTitle(ctx context.Context, id acp.SessionId, title string) (string, error) {
	if !a.reachable(id) {
		return "", notFound(id)
	}
	return a.Agent.SetSessionTitle(ctx, id, title)
}

// SessionStatus implements acp.SessionManager for sessions under the
// roots.
func (a *confinedAgent) SessionStatus(ctx context.Context, id acp.SessionId) (string, error) {
	if !a.reachable(id) {
		return "", notFound(id)
	}
	return a.Agent.SessionStatus(ctx, id)
}

// ArchiveSession implements acp.SessionManager for sessions under the
// roots.
func (a *confinedAgent) ArchiveSession(ctx context.Context, id acp.SessionId, archived bool) error {
	if !a.reachable(id) {
		return notFound(id)
	}
	return a.Agent.ArchiveSession(ctx, id, archived)
}
