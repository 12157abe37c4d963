package compact

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var long = strings.Repeat("x", 400) // over MinChars 50

func testOffloader(t *testing.T) *Offloader {
	t.Helper()
	return &Offloader{Dir: filepath.Join(t.TempDir(), "sess1", "offloaded"), Threshold: 1000, ScanRatio: 0.5, MinChars: 50}
}

// history returns u a(c0) t(c0) u a(c1) t(c1) ... with long results.
func history(n int) []llm.Message {
	var msgs []llm.Message
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, user("q"), asst("", call(id)), result(id, fmt.Sprintf("%d:%s", i, long)))
	}
	return msgs
}

// Seed 003, Context offload: token 低于阈值时不执行卸载.
func TestSeed003_OffloadBelowThresholdDoesNothing(t *testing.T) {
	o := testOffloader(t)
	msgs := history(4)
	before := snapshot(msgs)
	res, err := o.OffloadIfNeeded(msgs, o.Threshold-1)
	require.NoError(t, err)
	assert.Equal(t, 0, res.OffloadedCount)
	assert.Equal(t, before, res.Messages, "returned messages equal the input")
	assert.Same(t, &msgs[0], &res.Messages[0], "the input itself")
	assert.False(t, res.StillExceedsThreshold)
	assert.Zero(t, res.FreedTokens)
	assert.Empty(t, res.Paths)
	assert.NoDirExists(t, o.Dir, "nothing written")
}

// Seed 003, Context offload: token 达到阈值时替换 tool 内容为路径引用.
func TestSeed003_OffloadAtThresholdReplacesToolContentWithPath(t *testing.T) {
	o := testOffloader(t)
	msgs := history(4) // 12 messages: scan the first 6, holding t(c0) and t(c1)
	before := snapshot(msgs)
	res, err := o.OffloadIfNeeded(msgs, o.Threshold) // reaching it is enough
	require.NoError(t, err)
	assert.Equal(t, 2, res.OffloadedCount)
	require.Len(t, res.Paths, 2)
	assert.Equal(t, before, msgs, "input untouched")

	for k, i := range []int{2, 5} {
		m := res.Messages[i]
		require.Len(t, m.Content, 1)
		assert.Equal(t, "Tool result is at: "+res.Paths[k], m.Content[0].Text)
		assert.True(t, filepath.IsAbs(res.Paths[k]))
		assert.Equal(t, o.Dir, filepath.Dir(res.Paths[k]))
		assert.Equal(t, msgs[i].ToolCallID, m.ToolCallID, "the message still answers its call")
		assert.Equal(t, msgs[i].ToolName, m.ToolName)
		b, err := os.ReadFile(res.Paths[k])
		require.NoError(t, err)
		assert.Equal(t, msgs[i].Content[0].Text, string(b))
		if runtime.GOOS != "windows" {
			fi, err := os.Stat(res.Paths[k])
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		}
	}
	assert.NoError(t, protocolError(res.Messages))
	freed := EstimateTokens(msgs) - EstimateTokens(res.Messages)
	assert.Equal(t, freed, res.FreedTokens)
	assert.Equal(t, o.Threshold-freed, res.CurrentTokens)
	assert.Equal(t, o.Threshold, res.PreviousTokens)
	assert.Equal(t, "u a(c0) t(c0) u a(c1) t(c1) u a(c2) t(c2) u a(c3) t(c3)", shape(res.Messages))
}

// Seed 003, Context offload: 仅扫描前 scanRatio 区间消息.
func TestSeed003_OffloadScansOnlyFirstScanRatio(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		want  []int // indexes of offloaded messages
	}{
		{0.5, []int{2, 5}},          // first 6 of 12
		{0.25, []int{2}},            // first 3
		{0.24, nil},                 // first 2: floor(2.88)
		{0, nil},                    // nothing scanned
		{1, []int{2, 5, 8, 11}},     // everything
		{1.5, []int{2, 5, 8, 11}},   // clamped to 1
		{-1, nil},                   // clamped to 0
		{0.75, []int{2, 5, 8}},      // first 9
		{11.0 / 12, []int{2, 5, 8}}, // first 11: t(c3) is the 12th
		{11.5 / 12, []int{2, 5, 8}}, // floor(11.5)
		{12.0 / 12, []int{2, 5, 8, 11}},
	} {
		o := testOffloader(t)
		o.ScanRatio = tc.ratio
		msgs := history(4)
		res, err := o.OffloadIfNeeded(msgs, 5000)
		require.NoError(t, err)
		var got []int
		for i, m := range res.Messages {
			if _, ok := ParseReference(m.Text()); ok {
				got = append(got, i)
			}
		}
		assert.Equal(t, tc.want, got, "ratio %v", tc.ratio)
		assert.Equal(t, len(tc.want), res.OffloadedCount)
	}
}

// Seed 003, Context offload: 短 tool 输出不应卸载.
func TestSeed003_OffloadSkipsShortToolOutput(t *testing.T) {
	o := testOffloader(t)
	exactly := strings.Repeat("é", 50) // 50 characters, 100 bytes: still not longer than MinChars
	msgs := []llm.Message{
		user("q"), asst("", call("a"), call("b"), call("c"), call("d")),
		result("a", strings.Repeat("y", 50)),
		result("b", exactly),
		result("c", strings.Repeat("z", 51)),
		{Role: llm.RoleTool, ToolCallID: "d", Content: []llm.Part{llm.TextPart(strings.Repeat("w", 25)), llm.TextPart(strings.Repeat("w", 25))}}, // 51 with the "\n"
		user("later"), user("later"), user("later"), user("later"), user("later"), user("later"),
	}
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	assert.Equal(t, 2, res.OffloadedCount, "only the 51-character results")
	assert.Equal(t, msgs[2], res.Messages[2], "50 ASCII characters stay")
	assert.Equal(t, msgs[3], res.Messages[3], "50 characters stay, whatever their bytes")
	_, ok := ParseReference(res.Messages[4].Text())
	assert.True(t, ok)
	_, ok = ParseReference(res.Messages[5].Text())
	assert.True(t, ok)
	b, err := os.ReadFile(res.Paths[1])
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("w", 25)+"\n"+strings.Repeat("w", 25), string(b), "parts joined with a newline")

	// Nothing offloadable: the count does not grow and the input is
	// returned.
	res, err = o.OffloadIfNeeded(msgs[:4], 5000)
	require.NoError(t, err)
	assert.Equal(t, 0, res.OffloadedCount)
	assert.Equal(t, msgs[:4], res.Messages)
	assert.True(t, res.StillExceedsThreshold)
}

// Seed 003, Context offload: 已经是路径引用的 tool 消息不重复卸载.
func TestSeed003_OffloadSkipsExistingPathReference(t *testing.T) {
	o := testOffloader(t)
	ref := "  \n" + ReferencePrefix + " /elsewhere/" + strings.Repeat("p", 80) + ".txt"
	msgs := []llm.Message{user("q"), asst("", call("c1")), result("c1", ref), user("a"), user("b"), user("c")}
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	assert.Equal(t, 0, res.OffloadedCount)
	assert.Equal(t, msgs[2], res.Messages[2], "left unchanged")
	assert.NoDirExists(t, o.Dir)
}

// Seed 003, Context offload: 卸载后仍超阈值时设置标记.
func TestSeed003_OffloadSetsStillExceedsThreshold(t *testing.T) {
	o := testOffloader(t)
	msgs := history(4)
	res, err := o.OffloadIfNeeded(msgs, 100_000) // far more than offload can free
	require.NoError(t, err)
	require.Positive(t, res.OffloadedCount)
	assert.True(t, res.StillExceedsThreshold)
	assert.GreaterOrEqual(t, res.CurrentTokens, o.Threshold)

	// Freeing enough clears it: offload brings 1,000+freed-1 just under.
	o2 := testOffloader(t)
	res2, err := o2.OffloadIfNeeded(msgs, o2.Threshold+res.FreedTokens-1)
	require.NoError(t, err)
	assert.Equal(t, res.FreedTokens, res2.FreedTokens)
	assert.False(t, res2.StillExceedsThreshold)
	assert.Equal(t, o2.Threshold-1, res2.CurrentTokens)
}

func TestOffloadIdempotent(t *testing.T) {
	o := testOffloader(t)
	msgs := history(6)
	first, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	require.Equal(t, 3, first.OffloadedCount)

	second, err := o.OffloadIfNeeded(first.Messages, 5000)
	require.NoError(t, err)
	assert.Equal(t, 0, second.OffloadedCount)
	assert.Equal(t, first.Messages, second.Messages)

	// Offloading the original again (a crash lost the rewritten history)
	// lands in the same files: names depend on id and content only.
	again, err := testOffloaderAt(o.Dir).OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	assert.Equal(t, first.Paths, again.Paths)
	assert.Equal(t, first.Messages, again.Messages)
	entries, err := os.ReadDir(o.Dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no temporary files or duplicates left")
}

func testOffloaderAt(dir string) *Offloader {
	return &Offloader{Dir: dir, Threshold: 1000, ScanRatio: 0.5, MinChars: 50}
}

func TestOffloadReusedIDsDoNotCollide(t *testing.T) {
	// Local servers number calls per response, so ids repeat across turns.
	o := testOffloader(t)
	o.ScanRatio = 1
	msgs := []llm.Message{
		user("q"), asst("", call("call_0")), result("call_0", "first "+long),
		user("q"), asst("", call("call_0")), result("call_0", "second "+long),
	}
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	require.Len(t, res.Paths, 2)
	assert.NotEqual(t, res.Paths[0], res.Paths[1])
	restored := o.Restore(res.Messages)
	assert.Equal(t, msgs, restored)
}

func TestOffloadFileNames(t *testing.T) {
	for _, tc := range []struct{ id, text, prefix, ext string }{
		{"call_abc-1", "plain", "call_abc-1-", ".txt"},
		{"functions.read:0", "plain", "functions_read_0-", ".txt"},
		{"", "plain", "result-", ".txt"},
		{"../../etc/passwd", "plain", "______etc_passwd-", ".txt"},
		{strings.Repeat("x", 100), "plain", strings.Repeat("x", 48) + "-", ".txt"},
		{"c", ` {"a": [1]} `, "c-", ".json"},
		{"c", `[1,2]`, "c-", ".json"},
		{"c", `{"a":`, "c-", ".txt"},
	} {
		name := fileName(tc.id, tc.text)
		assert.True(t, strings.HasPrefix(name, tc.prefix), "%q → %q", tc.id, name)
		assert.True(t, strings.HasSuffix(name, tc.ext), "%q → %q", tc.id, name)
		assert.True(t, isOffloadName(name), name)
		assert.Equal(t, name, fileName(tc.id, tc.text), "deterministic")
	}
	assert.NotEqual(t, fileName("a/b", "t"), fileName("a_b", "t"), "the hash tells apart ids that look alike once made safe")
	for _, bad := range []string{"notes.txt", ".offload-123.tmp", "a-0123456789abcdef.md", "a-0123456789ABCDEF.txt", "-0123456789abcdef.txt", "a b-0123456789abcdef.txt", "a-0123456789abcde.txt"} {
		assert.False(t, isOffloadName(bad), bad)
	}
}

func TestOffloadSkipsImagesAndOtherRoles(t *testing.T) {
	o := testOffloader(t)
	o.ScanRatio = 1
	img := llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Content: []llm.Part{llm.TextPart(long), {Type: llm.PartImage, MIMEType: "image/png", Data: "AAAA"}}}
	msgs := []llm.Message{user(long), asst(long, call("c1")), img}
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	assert.Equal(t, 0, res.OffloadedCount)
}

func TestOffloadDisabledAndMisconfigured(t *testing.T) {
	msgs := history(4)
	res, err := (&Offloader{Dir: t.TempDir()}).OffloadIfNeeded(msgs, 1<<30)
	require.NoError(t, err)
	assert.Equal(t, 0, res.OffloadedCount, "threshold 0 is off")
	assert.False(t, res.StillExceedsThreshold)

	res, err = (&Offloader{Threshold: 10, ScanRatio: 1, MinChars: 1}).OffloadIfNeeded(msgs, 100)
	require.Error(t, err, "no Dir")
	assert.Equal(t, msgs, res.Messages, "still a usable history")
	assert.True(t, res.StillExceedsThreshold)
}

func TestOffloadWriteFailureKeepsResultInline(t *testing.T) {
	o := testOffloader(t)
	msgs := history(4)
	// A directory squats on the file c0's result would go to, so its
	// rename fails (for root too); c1's write succeeds.
	squat := filepath.Join(o.Dir, fileName("c0", msgs[2].Text()))
	require.NoError(t, os.MkdirAll(filepath.Join(squat, "x"), 0o700))

	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"c0"`)
	assert.Equal(t, 1, res.OffloadedCount, "the other result is still offloaded")
	assert.Equal(t, msgs[2], res.Messages[2], "the failed one stays inline")
	_, ok := ParseReference(res.Messages[5].Text())
	assert.True(t, ok)
	assert.NoError(t, protocolError(res.Messages), "a usable history despite the error")
	assert.Equal(t, EstimateTokens(msgs)-EstimateTokens(res.Messages), res.FreedTokens)
	entries, err := os.ReadDir(o.Dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the squatter and c1's file; no temporary file left")
}

func TestRestoreRoundTrip(t *testing.T) {
	o := testOffloader(t)
	o.ScanRatio = 1
	msgs := history(5)
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	require.Equal(t, 5, res.OffloadedCount)
	offloaded := snapshot(res.Messages)

	restored := o.Restore(res.Messages)
	assert.Equal(t, msgs, restored, "contents put back")
	assert.Equal(t, offloaded, res.Messages, "input untouched")

	// A deleted file becomes a marker, not an error.
	require.NoError(t, os.Remove(res.Paths[1]))
	restored = o.Restore(res.Messages)
	assert.Equal(t, "[Content unavailable: "+res.Paths[1]+"]", restored[5].Text())
	assert.Equal(t, msgs[2], restored[2])

	// Nothing to restore: the input itself.
	plain := []llm.Message{user("q")}
	assert.Same(t, &plain[0], &o.Restore(plain)[0])
}

func TestRestoreReadsOnlyItsOwnFiles(t *testing.T) {
	o := testOffloader(t)
	require.NoError(t, os.MkdirAll(o.Dir, 0o700))
	secret := filepath.Join(filepath.Dir(o.Dir), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o600))
	inside := filepath.Join(o.Dir, "notes.txt") // inside, but not a name offload gives
	require.NoError(t, os.WriteFile(inside, []byte("NOTES"), 0o600))
	sub := filepath.Join(o.Dir, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o700))
	nested := filepath.Join(sub, fileName("c", "x"))
	require.NoError(t, os.WriteFile(nested, []byte("NESTED"), 0o600))
	traversal := o.Dir + "/../secret.txt"
	link := filepath.Join(o.Dir, fileName("l", "x"))
	require.NoError(t, os.Symlink(secret, link))

	var msgs []llm.Message
	for _, p := range []string{secret, inside, nested, traversal, "relative/" + fileName("c", "x")} {
		msgs = append(msgs, result("c", ReferencePrefix+" "+p))
	}
	out := o.Restore(msgs)
	assert.Equal(t, msgs, out, "references outside Dir, or not offload names, are left alone")

	out = o.Restore([]llm.Message{result("l", ReferencePrefix+" "+link)})
	assert.Equal(t, "[Content unavailable: "+link+"]", out[0].Text(), "a symlink is not followed")
}

func TestCleanupDeletesUnreferenced(t *testing.T) {
	o := testOffloader(t)
	o.ScanRatio = 1
	msgs := history(4)
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	require.Len(t, res.Paths, 4)
	foreign := filepath.Join(o.Dir, "README.md")
	require.NoError(t, os.WriteFile(foreign, []byte("keep me"), 0o600))
	tmp := filepath.Join(o.Dir, ".offload-1.tmp")
	require.NoError(t, os.WriteFile(tmp, nil, 0o600))

	// Everything referenced: nothing goes.
	deleted, err := o.Cleanup(res.Messages)
	require.NoError(t, err)
	assert.Empty(t, deleted)

	// The history now keeps only the last two exchanges.
	kept := res.Messages[6:]
	deleted, err = o.Cleanup(kept)
	require.NoError(t, err)
	assert.ElementsMatch(t, res.Paths[:2], deleted)
	for _, p := range res.Paths[:2] {
		assert.NoFileExists(t, p)
	}
	for _, p := range append(res.Paths[2:], foreign, tmp) {
		assert.FileExists(t, p)
	}
	assert.Equal(t, msgs[6:], o.Restore(kept), "what is still referenced restores")

	// A history with no references empties Dir of offload files only.
	deleted, err = o.Cleanup(nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, res.Paths[2:], deleted)
	assert.FileExists(t, foreign)
}

func TestCleanupMissingDir(t *testing.T) {
	o := testOffloader(t)
	deleted, err := o.Cleanup(history(1))
	assert.NoError(t, err)
	assert.Empty(t, deleted)
	_, err = (&Offloader{}).Cleanup(nil)
	assert.Error(t, err)
}

func TestRelativeDirIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	o := &Offloader{Dir: "offloaded", Threshold: 1, ScanRatio: 1, MinChars: 1}
	msgs := history(1)
	res, err := o.OffloadIfNeeded(msgs, 10)
	require.NoError(t, err)
	require.Len(t, res.Paths, 1)
	real, err := filepath.EvalSymlinks(filepath.Dir(res.Paths[0]))
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(filepath.Join(dir, "offloaded"))
	require.NoError(t, err)
	assert.Equal(t, want, real)
	assert.True(t, filepath.IsAbs(res.Paths[0]))
	assert.Equal(t, msgs, o.Restore(res.Messages))
}

func TestParseReference(t *testing.T) {
	for text, want := range map[string]string{
		"Tool result is at: /a/b.txt":        "/a/b.txt",
		"  Tool result is at:/a/b.txt \n":    "/a/b.txt",
		"Tool result is at: ":                "",
		"tool result is at: /a":              "",
		"Result: Tool result is at: /a":      "",
		"Tool result is at: /with space.txt": "/with space.txt",
	} {
		got, ok := ParseReference(text)
		assert.Equal(t, want, got, "%q", text)
		assert.Equal(t, want != "", ok, "%q", text)
	}
}

// An offloaded file Restore reads back is bounded: one past
// MaxRestoreBytes (here sparse, 4 times the cap; a planted session could
// hold a terabyte) becomes the unavailable marker instead of being read
// whole into memory.
func TestRestoreDoesNotReadAnOversizedFile(t *testing.T) {
	o := testOffloader(t)
	o.ScanRatio = 1
	msgs := history(2)
	res, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	require.Equal(t, 2, res.OffloadedCount)
	f, err := os.OpenFile(res.Paths[0], os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(4*MaxRestoreBytes))
	require.NoError(t, f.Close())
	restored := o.Restore(res.Messages)
	assert.Equal(t, "[Content unavailable: "+res.Paths[0]+"]", restored[2].Text())
	assert.Equal(t, msgs[5], restored[5], "the other file is read back")
}
