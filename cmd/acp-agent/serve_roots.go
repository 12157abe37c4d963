package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/acpv2agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/runtime"
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
	*rootsGuard
}

// rootsGuard is serve's rule for the directories, MCP servers and
// stored sessions of remote clients' sessions, whichever ACP version
// they speak.
type rootsGuard struct {
	host          *host.Host // where sessions named by id are looked up
	roots         []string   // absolute, symbolic links resolved
	given         []string   // the roots as named (absolute, clean), for the check before any stat
	allowMCPStdio bool
}

// serveRoots resolves the --root directories (default: the current
// directory): roots with their symbolic links resolved, and named, the
// same directories as given (absolute and clean).
func serveRoots(given []string) (roots, named []string, err error) {
	if len(given) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		given = []string{wd}
	}
	for _, r := range given {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, nil, fmt.Errorf("--root %s: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("--root %s: %w", r, err)
		}
		if info, err := os.Stat(real); err != nil || !info.IsDir() {
			return nil, nil, fmt.Errorf("--root %s: not a directory", r)
		}
		roots = append(roots, real)
		named = append(named, abs)
	}
	return roots, named, nil
}

// confine returns dir resolved, or an invalid-params error naming field
// when it is not inside a root. A path outside the roots is refused
// before anything looks at it, with an answer that does not depend on
// what is there (nothing, a file or a directory): a remote client must
// not learn about the machine outside the roots. Only a path named
// inside a root is resolved, and what it resolves to must be inside one
// too (a symbolic link in a root does not lead out).
func (a *rootsGuard) confine(field, dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: %s: %q is not an absolute path", acp.ErrInvalidParams, field, dir)
	}
	outside := fmt.Errorf("%w: %s: %s is outside the directories this agent serves (%s)", acp.ErrInvalidParams, field, dir, strings.Join(a.roots, ", "))
	clean := filepath.Clean(dir)
	if !within(a.roots, clean) && !within(a.given, clean) {
		long, ok := a.longNameInRoots(clean)
		if !ok {
			return "", outside
		}
		clean = long
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		// A link inside a root to a place outside that is not there is
		// outside too, whatever is missing.
		if !a.inRoots(resolveDangling(clean)) {
			return "", outside
		}
		return "", fmt.Errorf("%w: %s: %s cannot be used: %v", acp.ErrInvalidParams, field, dir, err)
	}
	if a.inRoots(real) {
		return real, nil
	}
	return "", outside
}

func (a *rootsGuard) inRoots(real string) bool { return within(a.roots, real) }

// longNameInRoots is path with its Windows 8.3 short names expanded, if
// it has any and that names a place inside a root: a client's TEMP is
// often C:\Users\RUNNER~1\AppData\Local\Temp while the root is the long
// name. Only a path on a root's own volume is looked at, so no client
// makes the agent reach another host (a \\host\share path would hand
// it the user's NTLM credentials); every failure, whatever exists there,
// is the same "outside" answer.
func (a *rootsGuard) longNameInRoots(path string) (string, bool) {
	if !strings.Contains(path, "~") || !sameVolumeAsOne(path, a.roots) && !sameVolumeAsOne(path, a.given) {
		return "", false
	}
	long, err := runtime.LongPathName(path)
	if err != nil || long == path || !(within(a.roots, long) || within(a.given, long)) {
		return "", false
	}
	return long, true
}

// sameVolumeAsOne reports whether path is on the volume (drive letter or
// \\host\share) of one of dirs; on Unix every path is.
func sameVolumeAsOne(path string, dirs []string) bool {
	v := filepath.VolumeName(path)
	for _, d := range dirs {
		if strings.EqualFold(filepath.VolumeName(d), v) {
			return true
		}
	}
	return false
}

// within reports whether path is one of dirs or under one, by name
// alone.
func within(dirs []string, path string) bool {
	for _, root := range dirs {
		if rel, err := filepath.Rel(root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
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
func (a *rootsGuard) reachable(id string) bool {
	pl, err := a.host.LookupSession(id)
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
		if pl, err = a.host.LookupSession(pl.ParentSessionID); err != nil {
			return true // the parent is gone: the child's own directories decide
		}
	}
	return false
}

// placeInRoots reports whether every directory of pl is inside a root.
func (a *rootsGuard) placeInRoots(pl host.Place) bool {
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

// resolveDangling is dir with every symbolic link on its way followed,
// dangling ones too, as far as it exists; the rest is taken by name.
func resolveDangling(dir string) string {
	const maxLinks = 40 // as the kernel's ELOOP
	vol := filepath.VolumeName(dir)
	cur := vol + string(filepath.Separator)
	parts := strings.Split(strings.TrimPrefix(dir[len(vol):], string(filepath.Separator)), string(filepath.Separator))
	for i, links := 0, 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := filepath.Join(cur, parts[i])
		info, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if info.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil || links == maxLinks {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		links++
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		target = filepath.Clean(target)
		vol = filepath.VolumeName(target)
		cur = vol + string(filepath.Separator)
		parts = append(strings.Split(strings.TrimPrefix(target[len(vol):], string(filepath.Separator)), string(filepath.Separator)), parts[i+1:]...)
		i = -1
	}
	return filepath.Clean(cur)
}

// notFound is the answer to a session id outside the roots: the one an
// unknown id gets.
func notFound(id acp.SessionId) error { return acp.SessionNotFound(id, "") }

// check confines cwd and extra (in place) and refuses stdio MCP servers.
func (a *confinedAgent) check(cwd *string, extra []string, mcps []acp.McpServer) error {
	var stdio []string
	for _, m := range mcps {
		if m.Stdio != nil {
			stdio = append(stdio, m.Stdio.Name)
		} else {
			stdio = append(stdio, "")
		}
	}
	return a.rootsGuard.check(cwd, extra, stdio)
}

// check confines cwd and extra (in place) and refuses stdio MCP servers:
// stdio has, for each MCP server, its name when it is a stdio server,
// else "".
func (a *rootsGuard) check(cwd *string, extra []string, stdio []string) error {
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
		for i, name := range stdio {
			if name != "" {
				return fmt.Errorf("%w: mcpServers[%d]: stdio MCP servers (%q would run a command on the agent's machine) are refused over serve; its operator can allow them with --allow-mcp-stdio", acp.ErrInvalidParams, i, name)
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
	r, err := a.confineLoad(req)
	if err != nil {
		return nil, nil, err
	}
	return a.Agent.LoadSession(ctx, r, client)
}

// CheckLoad implements acp.LoadChecker: what LoadSession would refuse
// for the request's directories, servers or id, before the service ends
// the live session the request names.
func (a *confinedAgent) CheckLoad(ctx context.Context, req *acp.LoadRequest) error {
	r, err := a.confineLoad(req)
	if err != nil {
		return err
	}
	return a.Agent.CheckLoad(ctx, r)
}

// confineLoad is req with its directories confined to the roots (a
// copy; req is the caller's), or why it is refused: a directory outside
// the roots, a stdio MCP server, an id outside them (as an unknown one).
func (a *confinedAgent) confineLoad(req *acp.LoadRequest) (*acp.LoadRequest, error) {
	r := *req
	r.AdditionalDirectories = append([]string(nil), req.AdditionalDirectories...)
	if err := a.check(&r.CWD, r.AdditionalDirectories, r.MCPServers); err != nil {
		return nil, err
	}
	if !a.reachable(r.SessionID) {
		return nil, notFound(r.SessionID)
	}
	return &r, nil
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
	if !a.reachable(r.SourceID) {
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
	resp.Sessions = keepReachable(a.rootsGuard, resp.Sessions, func(s acp.SessionInfo) string { return s.SessionID })
	return resp, nil
}

// keepReachable keeps the sessions that work under the roots.
func keepReachable[S any](g *rootsGuard, sessions []S, id func(S) string) []S {
	kept := sessions[:0]
	for _, s := range sessions {
		if g.reachable(id(s)) {
			kept = append(kept, s)
		}
	}
	return kept
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

// confinedAgentV2 is the v2 agent as serve offers it: the same rules as
// confinedAgent's, on v2's session/new, resume, fork, list, delete,
// set_title, status, archive and unarchive.
type confinedAgentV2 struct {
	*acpv2agent.Agent
	*rootsGuard
}

// v2Stdio names the stdio servers of mcps (rootsGuard.check).
func v2Stdio(mcps []acpv2.McpServer) []string {
	var stdio []string
	for _, m := range mcps {
		if m.Stdio != nil {
			stdio = append(stdio, m.Stdio.Name)
		} else {
			stdio = append(stdio, "")
		}
	}
	return stdio
}

// NewSession implements acp.AgentV2.
func (a *confinedAgentV2) NewSession(ctx context.Context, req *acpv2.NewSessionRequest, client *acp.ClientConnV2) (acp.SessionV2, *acpv2.NewSessionResponse, error) {
	r := *req
	r.AdditionalDirectories = append([]string(nil), req.AdditionalDirectories...)
	if err := a.check(&r.CWD, r.AdditionalDirectories, v2Stdio(r.MCPServers)); err != nil {
		return nil, nil, err
	}
	return a.Agent.NewSession(ctx, &r, client)
}

// ResumeSession implements acp.AgentV2.
func (a *confinedAgentV2) ResumeSession(ctx context.Context, req *acpv2.ResumeSessionRequest, client *acp.ClientConnV2) (acp.SessionV2, *acp.ResumedSessionV2, error) {
	r, err := a.confineResume(req)
	if err != nil {
		return nil, nil, err
	}
	return a.Agent.ResumeSession(ctx, r, client)
}

// CheckResume implements acp.LoadCheckerV2: what ResumeSession would
// refuse, before the service ends the live session the request names.
func (a *confinedAgentV2) CheckResume(ctx context.Context, req *acpv2.ResumeSessionRequest) error {
	r, err := a.confineResume(req)
	if err != nil {
		return err
	}
	return a.Agent.CheckResume(ctx, r)
}

// confineResume is confineLoad for v2's resume.
func (a *confinedAgentV2) confineResume(req *acpv2.ResumeSessionRequest) (*acpv2.ResumeSessionRequest, error) {
	r := *req
	r.AdditionalDirectories = append([]string(nil), req.AdditionalDirectories...)
	if err := a.check(&r.CWD, r.AdditionalDirectories, v2Stdio(r.MCPServers)); err != nil {
		return nil, err
	}
	if !a.reachable(r.SessionID) {
		return nil, notFound(r.SessionID)
	}
	return &r, nil
}

// ForkSession implements acp.ForkerV2 (v2's fork names its cwd).
func (a *confinedAgentV2) ForkSession(ctx context.Context, req *acpv2.ForkSessionRequest, source acp.SessionV2, client *acp.ClientConnV2) (acp.SessionV2, *acpv2.ForkSessionResponse, error) {
	r := *req
	r.AdditionalDirectories = append([]string(nil), req.AdditionalDirectories...)
	if err := a.check(&r.CWD, r.AdditionalDirectories, v2Stdio(r.MCPServers)); err != nil {
		return nil, nil, err
	}
	if !a.reachable(r.SessionID) {
		return nil, nil, notFound(r.SessionID)
	}
	return a.Agent.ForkSession(ctx, &r, source, client)
}

// ListSessions implements acp.AgentV2: sessions that do not work under
// the roots (reachable) are not shown.
func (a *confinedAgentV2) ListSessions(ctx context.Context, req *acpv2.ListSessionsRequest) (*acpv2.ListSessionsResponse, error) {
	resp, err := a.Agent.ListSessions(ctx, req)
	if err != nil {
		return nil, err
	}
	resp.Sessions = keepReachable(a.rootsGuard, resp.Sessions, func(s acpv2.SessionInfo) string { return s.SessionID })
	return resp, nil
}

// DeleteSession implements acp.SessionDeleterV2 as confinedAgent's does:
// an id unknown or outside the roots is not found.
func (a *confinedAgentV2) DeleteSession(ctx context.Context, id acpv2.SessionId) error {
	if !a.reachable(id) {
		return notFound(id)
	}
	return a.Agent.DeleteSession(ctx, id)
}

// SetSessionTitle implements acp.SessionManager for sessions under the
// roots.
func (a *confinedAgentV2) SetSessionTitle(ctx context.Context, id acpv2.SessionId, title string) (string, error) {
	if !a.reachable(id) {
		return "", notFound(id)
	}
	return a.Agent.SetSessionTitle(ctx, id, title)
}

// SessionStatus implements acp.SessionManager for sessions under the
// roots.
func (a *confinedAgentV2) SessionStatus(ctx context.Context, id acpv2.SessionId) (string, error) {
	if !a.reachable(id) {
		return "", notFound(id)
	}
	return a.Agent.SessionStatus(ctx, id)
}

// ArchiveSession implements acp.SessionManager for sessions under the
// roots.
func (a *confinedAgentV2) ArchiveSession(ctx context.Context, id acpv2.SessionId, archived bool) error {
	if !a.reachable(id) {
		return notFound(id)
	}
	return a.Agent.ArchiveSession(ctx, id, archived)
}
