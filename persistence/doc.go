// Package persistence stores session transcripts as JSONL files: one file
// per session, one JSON object per line, written so that a crash at any
// moment loses nothing that was acknowledged as durable. The format is
// specified in docs/jsonl-format.md.
//
// # Files
//
// A Store is a directory (DefaultDir: $XDG_STATE_HOME/acp-agent/sessions).
// Session id lives in <id>.jsonl. Its line 1 is a Header ({"type":"session",
// "version":1,"id":...}); every later line is one record, a JSON object the
// agent defines (each has a "type" member). The store never looks inside
// records beyond checking that each line is one JSON object; OpenDecoded
// has the caller's decoder do that check as it decodes each record, so a
// record is read once, and OpenDecodedStream also hands the records to the
// caller in file order while later lines are still being decoded (on the
// caller's goroutine; the decoding goroutines end before it returns).
// Beside it the
// store may keep <id>.lock (the lock file), <id>.jsonl.broken (the original
// file as it was before a torn tail was cut off) and, only while a write is
// in flight or after a crash during one, <id>.jsonl.tmp<digits>; a session
// reserved and not saved yet has one too, empty, made early
// (Reservation.Prepare) so that its first save does not create a file.
// A Store that takes a session lock keeps an entry in .running/ (RunningDir)
// locked until Close: an entry left unlocked tells the next start
// (RemoveStaleAtStart) that an agent stopped without cleaning up, and only
// then does it list the whole directory (RemoveStale).
//
// # Writing
//
// Each record is written as its JSON plus "\n" in one write(2) on an
// O_APPEND descriptor, under a mutex, so lines never interleave. Append
// does not fsync; Sync does, and concurrent Syncs share one fsync (group
// commit). A record is acknowledged, that is durable, once Sync or
// AppendSync returns nil after its Append returned: callers fsync before
// they send the response that depends on the record. Create, Fork and
// Rewrite build a temporary file, fsync it, rename it into place and fsync
// the directory, so a session file under its final name is never partial.
// Directory fsyncs are group-committed across the Store: one that started
// after a caller's rename covers it, so sessions created at once share
// them, and the first one after a Store's entry in .running/ was made
// fsyncs .running/ first (the entry is durable before anything it stands
// for). A checkpoint store's directories and log have their parents
// fsynced before what depends on them is reported durable, together,
// after the first write's own fsync.
// SyncDir does the same for files other packages keep beside a session
// (offloaded tool results).
//
// # Recovery
//
// Open (and OpenDecoded, which applies the same rules) reads the whole file. A last line that has no newline or is not a
// JSON object is a torn append: Open keeps a copy of the whole file as
// <id>.jsonl.broken, truncates the file to its last good line and fsyncs,
// before anything is appended (otherwise the next record would be glued
// onto the fragment). A bad line in the middle is skipped, reported in
// Loaded.Skipped and left in place; the lines after it are kept. A header
// that cannot be read is ErrCorrupt and the file is not touched.
//
// # Locking and concurrency
//
// One File at a time holds a session, across processes: Create, Open and
// Fork take flock(LOCK_EX|LOCK_NB) on the sidecar <id>.lock, which a
// Rewrite's rename does not replace, and check an in-process registry
// first. A second opener, in this process or another, gets ErrLocked. The
// lock is released by Close, or by the kernel when the process dies.
// Delete takes the lock too, so a caller closes its own File before
// deleting the session. List takes no locks: it reads only headers and
// mtimes, and headers only change by atomic rename.
//
// A Store is safe for concurrent use, and so is a File: any number of
// goroutines may Append, Sync, Rewrite, Fork from it and read its Count
// and Header at once. The package starts no goroutines that outlive a
// call.
package persistence
