// Package prompts reads the prompts a repository and its user define in
// files: slash commands (Markdown files in .acp-agent/commands and
// .claude/commands, subfolders giving "dir:name", frontmatter
// description and argument-hint, $ARGUMENTS and $1…$9) and skills
// (folders with a SKILL.md whose name and description go into the
// context and whose body is loaded when the model uses it). It knows no
// protocol: the ACP adapter turns commands into available_commands, the
// built-in tools offer the skills.
//
// Files are untrusted: each must really be a regular file inside the
// directory it was found in (symlinks out are refused), and a
// repository's directories and files must really be inside the workspace
// root under the rules the file tools apply there (a commands or skills
// directory that is a symlink leading out is not read; hard links, .git
// and .env are refused; a skill's .env is neither listed nor read), at most
// MaxFileBytes, with a valid name; a library holds at most MaxCommands.
// Expansion substitutes arguments in one pass, so arguments are never
// expanded again.
//
// Functions here keep no state and are safe for concurrent use. A Cache
// (one per process, or per host) is the only state: it shares what a set
// of directories defines among the sessions using it (a Snapshot, which
// nobody may change), reads the files again only when their Signature
// changed, and lets one look at the directories serve every caller that
// asked for a look no older than its start (Shared.Since); its methods
// are safe for concurrent use, and a caller never waits for another's
// look (only for a read of files that changed).
package prompts
