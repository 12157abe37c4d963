// Package persistence will hold the per-session JSONL transcripts: one
// file per session, one JSON object per line, fsynced before the responses
// that depend on them, with torn-tail recovery.
//
// It is empty until the persistence issue builds it; the package exists so
// the module layout is the one the design fixes.
package persistence
