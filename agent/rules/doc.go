// Package rules finds and reads the rules files of a session: AGENTS.md
// (or, where there is none, CLAUDE.md and GEMINI.md) from the repository
// root down to the workspace root, the user's own AGENTS.md, and nested
// ones in subdirectories as the session first reads or edits a file
// below them. They go into the system prompt with their paths, so they
// survive compaction.
//
// Repository files are untrusted: a rules file is read only if it really
// is a regular file inside the repository, under the rules the file tools
// apply there (a symlink to ~/.ssh is refused, so is a hard link, which
// may be a file from outside, and a path through .git or .env), each file is cut at MaxFileBytes and all of them at
// MaxTotalBytes, and what was cut, left out or refused is reported once
// through Notices.
//
// A Set is safe for concurrent use.
package rules
