// Package sessionid holds the part of the session id rule that comes
// from how the session store names its files: an id is a file name
// stem (<id>.jsonl, <id>.lock, <id>.jsonl.broken, <id>.jsonl.tmp<n>)
// and a directory name (<id>/), so no id may be another session's file
// name, on any file system the store may live on. persistence.ValidateID
// and acp.ValidateSessionID apply it after their syntax rule. Pure and
// safe for concurrent use.
package sessionid

import "strings"

// NameClash says why id, which passed the syntax rule (ASCII letters,
// digits, '-', '_', '.'), cannot name a session, or "" when it can:
//
//   - it ends in ".jsonl" or ".lock", or holds ".jsonl.", in any case:
//     its directory would be another session's data, lock, broken or
//     temporary file (session/delete of "<id>.jsonl" removed it), and
//     case-insensitive file systems (macOS, Windows) fold the case;
//   - it ends in '.': Windows drops trailing dots, so "x." is "x";
//   - its part before the first dot is a Windows device name (con, prn,
//     aux, nul, com0-9, lpt0-9, in any case): "nul.jsonl" is the device.
func NameClash(id string) string {
	lower := strings.ToLower(id)
	switch {
	case strings.HasSuffix(lower, ".jsonl"), strings.HasSuffix(lower, ".lock"), strings.Contains(lower, ".jsonl."):
		return "it is spelled like a session store file name (.jsonl, .lock)"
	case strings.HasSuffix(id, "."):
		return "it ends with a dot"
	}
	stem, _, _ := strings.Cut(lower, ".")
	switch {
	case stem == "con", stem == "prn", stem == "aux", stem == "nul",
		len(stem) == 4 && (strings.HasPrefix(stem, "com") || strings.HasPrefix(stem, "lpt")) && stem[3] >= '0' && stem[3] <= '9':
		return "it is a Windows device name"
	}
	return ""
}
