package mcpclient

// Server is the configuration of one MCP server, as a client names it for
// a session (ACP's session/new mcpServers, mapped by the adapter):
// exactly one of Stdio, HTTP, SSE, Channel and Unknown is set.
type Server struct {
	Stdio *StdioServer // started as a child process
	HTTP  *HTTPServer  // MCP streamable HTTP
	SSE   *HTTPServer  // the deprecated HTTP+SSE transport
	// Channel is a server the caller reaches for us (MCP over ACP).
	Channel *ChannelServer
	// Unknown is a server of a transport this package does not know: it
	// fails to connect with an "unsupported transport" Failure.
	Unknown *UnknownServer
}

// StdioServer is a server run as a child process.
type StdioServer struct {
	Name    string
	Command string
	Args    []string
	Env     []EnvVariable
}

// HTTPServer is a server reached over HTTP at URL, with Headers added to
// every request to its origin.
type HTTPServer struct {
	Name    string
	URL     string
	Headers []HTTPHeader
}

// UnknownServer names a server of an unsupported transport.
type UnknownServer struct {
	Name string
	Tag  string // the transport's name, as the client gave it
}

// EnvVariable is a variable of a stdio server's environment.
type EnvVariable struct {
	Name, Value string
}

// HTTPHeader is a header sent to an http or sse server.
type HTTPHeader struct {
	Name, Value string
}

// Tag names the server's transport: "" for stdio, "http", "sse", "acp"
// (a channel), or the unknown transport's own name.
func (s Server) Tag() string {
	switch {
	case s.HTTP != nil:
		return "http"
	case s.SSE != nil:
		return "sse"
	case s.Channel != nil:
		return "acp"
	case s.Unknown != nil:
		return s.Unknown.Tag
	}
	return ""
}

// Name is the server's configured name.
func (s Server) Name() string {
	switch {
	case s.Stdio != nil:
		return s.Stdio.Name
	case s.HTTP != nil:
		return s.HTTP.Name
	case s.SSE != nil:
		return s.SSE.Name
	case s.Channel != nil:
		return s.Channel.Name
	case s.Unknown != nil:
		return s.Unknown.Name
	}
	return ""
}
