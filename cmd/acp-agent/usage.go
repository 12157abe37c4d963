package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// printUsage prints the usage of command name (acp-agent, acp-agent exec,
// doctor, serve, connect, login) and its flags to w. Unlike flag.PrintDefaults it does
// not add "(default …)" to a flag whose text already names its default,
// nor print the internal sentinels (-1 for "not given").
func printUsage(w io.Writer, fs *flag.FlagSet, name string) {
	switch name {
	case "acp-agent":
		fmt.Fprint(w, `Usage: acp-agent [flags]
       acp-agent exec [flags] PROMPT   run one turn here, without an editor (acp-agent exec --help)
       acp-agent doctor [flags]        check the setup: config, model, sessions, sandbox, tools (acp-agent doctor --help)
       acp-agent login [flags]         set up a provider's API key, kept in the OS keychain (acp-agent login --help)
       acp-agent serve [flags]         serve remote editors over HTTP and WebSocket (acp-agent serve --help)
       acp-agent connect [flags] URL   an editor's local agent that forwards to a remote serve (acp-agent connect --help)

acp-agent speaks the Agent Client Protocol on stdin/stdout; editors start it as a subprocess
(README.md has the settings of Zed, JetBrains, Neovim and Emacs).
Environment: OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL.

Flags:
`)
	case "acp-agent exec":
		fmt.Fprint(w, `Usage: acp-agent exec [flags] PROMPT

Runs one turn in the current directory (or --cwd) and prints the answer, tool calls and results.
PROMPT "-" reads the prompt from stdin. Exit status: 0 end_turn, 1 error, 2 usage,
3 max_tokens or max_turn_requests, 4 refusal, 130 cancelled.

Flags:
`)
	case "acp-agent serve":
		fmt.Fprint(w, `Usage: acp-agent serve [flags]

Serves the agent to remote editors over ACP's Streamable HTTP and WebSocket transport
(POST/GET/DELETE /acp, GET /acp with Upgrade: websocket, GET /healthz); docs/remote.md.
Loopback only unless --tls-cert/--tls-key (or --insecure behind a TLS proxy). Every request needs
the bearer token of --token-file, generated and printed to stderr at the first start.
It takes the flags of acp-agent too (model, mode, sandbox, session directory, ...).

Flags:
`)
	case "acp-agent connect":
		fmt.Fprint(w, `Usage: acp-agent connect [flags] https://HOST/acp

Speaks ACP on stdin/stdout and forwards it to a remote acp-agent serve over WebSocket
(docs/remote.md): an editor starts it like a local agent.

Flags:
`)
	case "acp-agent login":
		fmt.Fprint(w, `Usage: acp-agent login [flags]

Sets up a model provider: asks for the API key, checks it with one request, and stores it
in the OS keychain (else in a file only you can read). Editors run this for ACP's terminal login.

Flags:
`)
	case "acp-agent doctor":
		fmt.Fprint(w, `Usage: acp-agent doctor [flags]

Checks what the agent needs on this machine: the config file, the model's API key and endpoint
(one short request; --offline skips it), the session directory, the sandbox, and the PATH
commands get with the tools found on it. Exit status: 0 all good, 1 something to fix.
It takes the same flags as acp-agent, so it checks the setup an editor would start.

Flags:
`)
	}
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintln(w, line)
		if showDefault(f, usage) {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "    \t%s\n", strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

// showDefault reports whether the flag's default should be printed: it is
// not the zero value, not a "not given" sentinel, and the text does not
// already say it.
func showDefault(f *flag.Flag, usage string) bool {
	switch f.DefValue {
	case "", "0", "false", "-1":
		return false
	}
	return !strings.Contains(usage, "default")
}
