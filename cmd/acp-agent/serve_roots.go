package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/acpagent"
)

// confinedAgent is the agent as serve offers it to remote clients: every
// directory a session works in (cwd and additionalDirectories of
// session/new, load, resume and fork) must be inside one of the --root
// directories once its symbolic links are resolved, and is handed to the
// agent resolved; stdio MCP servers (commands a client would start on
// this machine) are refused unless allowed; session/list shows only the
// sessions under the roots. Every other method is the agent's own
// (embedding keeps the optional interfaces the acp.Server looks for).
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
	return a.Agent.ForkSession(ctx, &r, source, client)
}

// ListSessions implements acp.SessionStore: sessions whose directory is
// outside the roots are not shown.
func (a *confinedAgent) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	resp, err := a.Agent.ListSessions(ctx, req)
	if err != nil {
		return nil, err
	}
	kept := resp.Sessions[:0]
	for _, s := range resp.Sessions {
		if real, err := filepath.EvalSymlinks(s.CWD); err == nil && a.inRoots(real) {
			kept = append(kept, s)
		}
	}
	resp.Sessions = kept
	return resp, nil
}
