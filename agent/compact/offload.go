package compact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/persistence"
)

// ReferencePrefix starts the text that replaces an offloaded tool result:
// "Tool result is at: <path>".
const ReferencePrefix = "Tool result is at:"

// Offload defaults (Synapse's).
const (
	DefaultOffloadThreshold = 150_000
	DefaultScanRatio        = 0.5
	DefaultMinChars         = 50
)

// Offloader moves large, old tool results out of the history into files.
// The zero value never offloads (Threshold 0 is off); see NewOffloader for
// the defaults.
type Offloader struct {
	// Dir receives the files: <session-dir>/<sessionId>/offloaded. It
	// belongs to one session: Cleanup deletes files in it that the
	// session's history does not reference (only files with the names
	// OffloadIfNeeded gives, never anything else). A relative Dir is made
	// absolute against the working directory, since references must be
	// absolute paths. It is created (0700) on the first write.
	Dir string
	// Threshold is the context size in tokens at or above which
	// OffloadIfNeeded acts; 0 or less disables offloading.
	Threshold int
	// ScanRatio is the leading fraction of the history scanned for tool
	// results (the newest results are what the model is working with);
	// values are clamped to [0, 1].
	ScanRatio float64
	// MinChars: only tool results longer than this many characters are
	// offloaded (a reference is itself about 100 characters).
	MinChars int
}

// NewOffloader returns an Offloader for dir with Synapse's defaults:
// threshold 150,000 tokens, scan ratio 0.5, min chars 50.
func NewOffloader(dir string) *Offloader {
	return &Offloader{Dir: dir, Threshold: DefaultOffloadThreshold, ScanRatio: DefaultScanRatio, MinChars: DefaultMinChars}
}

// OffloadResult is the outcome of OffloadIfNeeded.
type OffloadResult struct {
	// Messages is the history to use from now on. When nothing was
	// offloaded it is the input slice itself; otherwise a new slice.
	Messages []llm.Message
	// OffloadedCount is the number of tool results replaced.
	OffloadedCount int
	// PreviousTokens is the contextTokens passed in.
	PreviousTokens int
	// CurrentTokens is PreviousTokens - FreedTokens.
	CurrentTokens int
	// FreedTokens is the estimated tokens the replacements saved.
	FreedTokens int
	// StillExceedsThreshold: CurrentTokens >= Threshold. It is false
	// whenever the input was below the threshold.
	StillExceedsThreshold bool
	// Paths are the files the replaced results now live in, in history
	// order.
	Paths []string
}

// OffloadIfNeeded offloads when contextTokens (see ContextSize) is at or
// above the threshold. Below it, it returns msgs unchanged with
// OffloadedCount 0 and StillExceedsThreshold false.
//
// Otherwise it considers the RoleTool messages among the first
// floor(len(msgs)·ScanRatio) messages. A message is offloaded when its
// content is text only, its text (parts joined with "\n") is longer than
// MinChars characters, and it does not already start (after leading white
// space) with ReferencePrefix. Its text is written atomically (temporary
// file, fsync, rename; mode 0600) to Dir/<id>-<hash>.<txt|json>, where id
// is the tool call id made file-name safe and hash covers the id and the
// text, and the message's content is replaced by the single text part
// "Tool result is at: <absolute path>"; its ToolCallID, ToolName and
// IsError stay. Writing a file whose name already exists is skipped: the
// name is derived from its content. Before it returns, the directory is
// fsynced (and, if it made Dir, the directories above the ones it made),
// so the files the messages name survive a power cut.
//
// msgs is never modified. A result that cannot be written stays inline
// and the failure is reported in err (all failures joined); the result is
// still a valid, usable history in that case, as it is for every error
// (Synapse logs and skips), so callers log err and go on with the result.
func (o *Offloader) OffloadIfNeeded(msgs []llm.Message, contextTokens int) (OffloadResult, error) {
	res := OffloadResult{Messages: msgs, PreviousTokens: contextTokens, CurrentTokens: contextTokens}
	if o.Threshold <= 0 || contextTokens < o.Threshold {
		return res, nil
	}
	res.StillExceedsThreshold = true

	scanEnd := int(float64(len(msgs)) * min(max(o.ScanRatio, 0), 1))
	var errs []error
	dir := ""
	for i := 0; i < scanEnd; i++ {
		m := &msgs[i]
		if m.Role != llm.RoleTool {
			continue
		}
		text, ok := offloadCandidate(m, o.MinChars)
		if !ok {
			continue
		}
		if dir == "" {
			d, err := o.dir()
			if err == nil {
				err = makeDir(d)
			}
			if err != nil {
				// Nothing can be written; every candidate stays inline.
				return res, fmt.Errorf("compact: offload directory: %w", err)
			}
			dir = d
		}
		path := filepath.Join(dir, fileName(m.ToolCallID, text))
		if err := writeOnce(path, []byte(text)); err != nil {
			errs = append(errs, fmt.Errorf("compact: offload result of call %q: %w", m.ToolCallID, err))
			continue
		}
		if res.OffloadedCount == 0 {
			res.Messages = append([]llm.Message(nil), msgs...)
		}
		repl := *m
		repl.Content = []llm.Part{llm.TextPart(ReferencePrefix + " " + path)}
		res.FreedTokens += MessageTokens(*m) - MessageTokens(repl)
		res.Messages[i] = repl
		res.OffloadedCount++
		res.Paths = append(res.Paths, path)
	}
	if res.OffloadedCount > 0 {
		// One directory fsync for all the files: the session's file
		// will name them. Without it nothing is offloaded.
		if err := syncWritten(dir); err != nil {
			return OffloadResult{Messages: msgs, PreviousTokens: contextTokens, CurrentTokens: contextTokens, StillExceedsThreshold: true},
				errors.Join(append(errs, fmt.Errorf("compact: offload directory: %w", err))...)
		}
	}
	res.CurrentTokens = contextTokens - res.FreedTokens
	res.StillExceedsThreshold = res.CurrentTokens >= o.Threshold
	return res, errors.Join(errs...)
}

// offloadCandidate returns the text of a tool message that should be
// offloaded: text-only content (an image cannot be put back as it was),
// longer than minChars characters, not already a reference.
func offloadCandidate(m *llm.Message, minChars int) (string, bool) {
	if len(m.Content) == 0 {
		return "", false
	}
	n := 0
	for _, p := range m.Content {
		if p.Type != llm.PartText {
			return "", false
		}
		n += len(p.Text)
	}
	n += len(m.Content) - 1 // the "\n" separators
	// Bytes bound characters from above and 4·characters from below, so
	// most messages are decided without counting runes.
	if n <= minChars {
		return "", false
	}
	text := m.Content[0].Text
	if len(m.Content) > 1 {
		parts := make([]string, len(m.Content))
		for i, p := range m.Content {
			parts[i] = p.Text
		}
		text = strings.Join(parts, "\n")
	}
	if strings.HasPrefix(strings.TrimLeftFunc(text, unicode.IsSpace), ReferencePrefix) {
		return "", false
	}
	if n <= 4*minChars && utf8.RuneCountInString(text) <= minChars {
		return "", false
	}
	return text, true
}

// fileName returns <safe id>-<16 hex digits>.<txt|json>: readable, and
// collision-free even when servers reuse ids across turns (Ollama and
// llama.cpp number calls call_0, call_1, ... per response).
func fileName(id, text string) string {
	var b strings.Builder
	for i := 0; i < len(id) && b.Len() < 48; i++ {
		c := id[i]
		if isNameByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		b.WriteString("result")
	}
	h := sha256.New()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(text))
	sum := h.Sum(nil)
	b.WriteByte('-')
	b.WriteString(hex.EncodeToString(sum[:8]))
	if looksLikeJSON(text) && json.Valid([]byte(text)) {
		b.WriteString(".json")
	} else {
		b.WriteString(".txt")
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isOffloadName reports whether name is one fileName could have produced;
// Cleanup deletes nothing else, so a misconfigured Dir cannot cost the
// user files.
func isOffloadName(name string) bool {
	var stem string
	switch {
	case strings.HasSuffix(name, ".txt"):
		stem = name[:len(name)-4]
	case strings.HasSuffix(name, ".json"):
		stem = name[:len(name)-5]
	default:
		return false
	}
	dash := len(stem) - 17
	if dash < 1 || stem[dash] != '-' || dash > 48 {
		return false
	}
	for i := 0; i < dash; i++ {
		if !isNameByte(stem[i]) {
			return false
		}
	}
	for i := dash + 1; i < len(stem); i++ {
		if c := stem[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// writeOnce writes data to path atomically unless a regular file of the
// same size is already there (names are content hashes: a previous run
// wrote it, possibly before a crash kept the reference from being saved).
// makeDir makes d and its missing parents, fsyncing the directory that
// holds each one it made: the files written in d are named by the
// session's file, so they must be found after a power cut.
func makeDir(d string) error {
	var made []string
	for p := d; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	for _, p := range made {
		if err := persistence.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// durableDirs are the directories (Dir of an Offloader) whose own entries
// syncWritten has made durable in this process.
var durableDirs sync.Map

// syncWritten makes the files just written in d durable: d is fsynced,
// and, the first time in this process, the two directories above it
// (<id>/ and the session directory), which the session's start made
// without an fsync.
func syncWritten(d string) error {
	if err := persistence.SyncDir(d); err != nil {
		return err
	}
	if _, ok := durableDirs.Load(d); ok {
		return nil
	}
	for p, i := filepath.Dir(d), 0; i < 2 && filepath.Dir(p) != p; p, i = filepath.Dir(p), i+1 {
		if err := persistence.SyncDir(p); err != nil {
			return err
		}
	}
	durableDirs.Store(d, true)
	return nil
}

// writeOnce writes data to path (a temporary file, fsynced, renamed)
// unless path holds it already; the caller fsyncs the directory.
func writeOnce(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".offload-*.tmp") // created 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func (o *Offloader) dir() (string, error) {
	if o.Dir == "" {
		return "", errors.New("compact: Offloader.Dir is empty")
	}
	return filepath.Abs(o.Dir)
}

// ParseReference returns the path of an offload reference: text that,
// trimmed of surrounding white space, is "Tool result is at: <path>" with
// a non-empty path. The path is not checked.
func ParseReference(text string) (path string, ok bool) {
	t := strings.TrimSpace(text)
	rest, ok := strings.CutPrefix(t, ReferencePrefix)
	if !ok {
		return "", false
	}
	path = strings.TrimSpace(rest)
	return path, path != ""
}

// reference returns the path of a RoleTool message's offload reference
// when it points at a file directly inside dir (an absolute, cleaned
// path), and "" otherwise. A tool can print "Tool result is at:
// /home/u/.ssh/id_rsa"; only files this package wrote may be read back.
func reference(m *llm.Message, dir string) string {
	if m.Role != llm.RoleTool || len(m.Content) != 1 || m.Content[0].Type != llm.PartText {
		return ""
	}
	p, ok := ParseReference(m.Content[0].Text)
	if !ok || !filepath.IsAbs(p) {
		return ""
	}
	p = filepath.Clean(p)
	if filepath.Dir(p) != dir || !isOffloadName(filepath.Base(p)) {
		return ""
	}
	return p
}

// UnavailableFormat is the text Restore puts in place of an offloaded
// result whose file cannot be read.
const UnavailableFormat = "[Content unavailable: %s]"

// Restore returns msgs with every offloaded tool result that Dir holds put
// back as a single text part; msgs is not modified. References to paths
// outside Dir, or to names OffloadIfNeeded does not give, are left as
// they are. A file that cannot be read (deleted, not a regular file, over
// MaxRestoreBytes) becomes "[Content unavailable: <path>]", so the result is always usable.
// When nothing is a reference, msgs itself is returned.
func (o *Offloader) Restore(msgs []llm.Message) []llm.Message {
	dir, err := o.dir()
	if err != nil {
		return msgs
	}
	out := msgs
	copied := false
	for i := range msgs {
		p := reference(&msgs[i], dir)
		if p == "" {
			continue
		}
		text := fmt.Sprintf(UnavailableFormat, p)
		if b, err := readOffloaded(p); err == nil {
			text = string(b)
		}
		if !copied {
			out, copied = append([]llm.Message(nil), msgs...), true
		}
		out[i].Content = []llm.Part{llm.TextPart(text)}
	}
	return out
}

// MaxRestoreBytes bounds an offloaded file Restore reads back: what was
// offloaded is a tool result (cut to tens of KiB for the model), so a
// larger file there (a planted session directory; a sparse file of a
// terabyte) is not one, and reading it whole would exhaust memory.
const MaxRestoreBytes = 16 << 20

// readOffloaded reads the regular file p if it is at most MaxRestoreBytes
// long: not a link, a FIFO or a device (checked before and after it is
// opened).
func readOffloaded(p string) ([]byte, error) {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxRestoreBytes {
		return nil, errors.New("not a regular file within the size limit")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRestoreBytes+1))
	if err == nil && len(b) > MaxRestoreBytes {
		err = errors.New("over the size limit")
	}
	return b, err
}

// Cleanup deletes the files in Dir that no tool message in msgs refers
// to, and returns their paths. Only files named as OffloadIfNeeded names
// them are considered; temporary files and anything else are left alone.
// A missing Dir is not an error. Failures to delete are joined in err; the
// other files are still deleted.
//
// Call it after the history msgs has been persisted, never before: a
// crash in between would leave a saved history pointing at deleted files.
func (o *Offloader) Cleanup(msgs []llm.Message) (deleted []string, err error) {
	dir, err := o.dir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compact: cleanup: %w", err)
	}
	keep := make(map[string]bool)
	for i := range msgs {
		if p := reference(&msgs[i], dir); p != "" {
			keep[filepath.Base(p)] = true
		}
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || keep[name] || !isOffloadName(name) {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("compact: cleanup: %w", err))
			continue
		}
		deleted = append(deleted, p)
	}
	return deleted, errors.Join(errs...)
}

// KeptSuffix ends the names of the files Keep writes. Cleanup never
// deletes them (they are not offload references but the whole output of
// a tool result the model was given only part of); they go with Dir.
const KeptSuffix = ".out"

// Keep writes the whole text of a tool result that was cut for the model
// to Dir (atomically, mode 0600) and returns the file's absolute path,
// which the model can read and search. The name is derived from id and
// text like an offloaded result's, so writing the same result twice
// writes one file.
func (o *Offloader) Keep(id, text string) (string, error) {
	d, err := o.dir()
	if err != nil {
		return "", err
	}
	if err := makeDir(d); err != nil {
		return "", fmt.Errorf("compact: keep: %w", err)
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	name := fileName(id, text)
	path := filepath.Join(d, strings.TrimSuffix(strings.TrimSuffix(name, ".txt"), ".json")+KeptSuffix)
	if err := writeOnce(path, []byte(text)); err != nil {
		return "", fmt.Errorf("compact: keep: %w", err)
	}
	// The tool result the session records names the file.
	if err := syncWritten(d); err != nil {
		return "", fmt.Errorf("compact: keep: %w", err)
	}
	return path, nil
}
