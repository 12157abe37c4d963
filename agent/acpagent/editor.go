package acpagent

import (
	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/runtime"
)

// editorOf is what the client offers the built-in tools: the fs/* methods
// and terminals it advertised, through its connection.
func editorOf(client *acp.ClientConn, sessionID string) tools.Editor {
	caps := client.Capabilities()
	var e tools.Editor
	if caps.FS.ReadTextFile {
		e.Reads = func(local *runtime.LocalFS) tools.TextFiles { return NewClientFS(client, sessionID, local) }
	}
	if caps.FS.WriteTextFile {
		e.Writes = func(local *runtime.LocalFS) tools.TextFiles { return NewClientFS(client, sessionID, local) }
	}
	if caps.Terminal {
		e.Terminal = NewClientTerminal(client, sessionID)
	}
	return e
}
