// Package tools provides the built-in coding tools of a session and the
// Workspace they work in: read_file, write_file, edit_file, multi_edit,
// apply_patch, list_directory, glob, grep, run_command,
// background_command, update_plan, web_fetch, ask_user, and skill (when
// skills are defined; builtins in builtin.go is the one list), on top of
// package runtime (confined local files and terminals, the editor's when
// the protocol adapter passes them in an Editor) and package policy
// (paths, commands, approvals' scope). The Workspace also holds the
// session's rules files (agent/rules) for the system prompt and the
// commands and skills defined in files (agent/prompts). A *Workspace is an
// agent.Workspace: a session registers its tools through the core's tool
// registry, like any other tool source, and closes it on Close.
//
// Each tool's arguments are a Go struct from which agent.NewTool infers
// the JSON Schema the model is offered (pinned by the golden files in
// testdata/golden/tools); the session checks the model's arguments
// against it before the tool decodes them. Tools treat every path and
// command as untrusted all the same: paths are
// resolved inside the roots with os.Root and checked against the denied
// names, commands are parsed and judged before anything runs, and with a
// sandbox local commands run confined (runtime/sandbox).
//
// Concurrency: a Workspace is safe for concurrent use; the tools of one
// session may run while another session's do. Close kills the local
// commands still running and waits for them.
package tools
