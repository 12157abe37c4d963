package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPNG is a 3×2 PNG.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// imageModelsFile declares openai/test-model a model with image input.
func imageModelsFile(t *testing.T, accepts bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "models.json")
	data, err := json.Marshal(map[string]any{"version": 1, "models": []any{
		map[string]any{"provider": "openai", "model": "test-model", "imageInput": accepts}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// toolImage returns the image blocks of a tool call's content.
func toolImages(u sdk.SessionToolCallUpdate) []*sdk.ContentBlockImage {
	var out []*sdk.ContentBlockImage
	for _, c := range u.Content {
		if c.Content != nil && c.Content.Content.Image != nil {
			out = append(out, c.Content.Content.Image)
		}
	}
	return out
}

// requestImages returns the base64 data of the images in a model request
// body: OpenAI image_url data URLs (in the user message after the tool
// messages), Anthropic base64 image sources (inside tool_result blocks).
func requestImages(t *testing.T, provider, body string) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	var out []string
	for i, m := range req.Messages {
		var parts []map[string]any
		if json.Unmarshal(m.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			switch provider {
			case "openai":
				if p["type"] == "image_url" {
					require.Equal(t, "tool", req.Messages[i-1].Role, "the images follow the tool messages")
					url := p["image_url"].(map[string]any)["url"].(string)
					require.True(t, strings.HasPrefix(url, "data:image/png;base64,"), url)
					out = append(out, strings.TrimPrefix(url, "data:image/png;base64,"))
				}
			case "anthropic":
				if p["type"] != "tool_result" {
					continue
				}
				blocks, _ := p["content"].([]any)
				for _, b := range blocks {
					if b := b.(map[string]any); b["type"] == "image" {
						src := b["source"].(map[string]any)
						require.Equal(t, "image/png", src["media_type"])
						out = append(out, src["data"].(string))
					}
				}
			}
		}
	}
	return out
}

// Issue 16: read_file of a PNG gives the model the image in each
// provider's own encoding, and shows the client an image block.
func TestBinaryReadFileImageReachesEachProvider(t *testing.T) {
	pic := testPNG(t)
	want := base64.StdEncoding.EncodeToString(pic)
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "pic.png"), pic, 0o600))
			model := newScriptedModel(t, provider, modelCall{"read_file", map[string]any{"path": "pic.png"}})
			client := newToolClient(dir, "allow_once")
			conn, sid := e2eSession(t, provider, model, client, sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true}},
				"--models-file", imageModelsFile(t, true))
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "what is in pic.png?"))
			u, ok := client.final(map[string]string{"openai": "call_0", "anthropic": "toolu_0"}[provider])
			require.True(t, ok)
			assert.Equal(t, sdk.ToolCallStatusCompleted, *u.Status)
			imgs := toolImages(u)
			require.Len(t, imgs, 1, "the client is shown the image")
			assert.Equal(t, "image/png", imgs[0].MimeType)
			assert.Equal(t, want, imgs[0].Data)
			assert.Contains(t, toolText(u), "3×2 pixels")
			assert.Equal(t, []string{want}, requestImages(t, provider, model.body(t, 1)), "the model gets the image")
			assert.NotContains(t, client.recorded(), "fs/read_text_file", "an image is not read through the editor's text reads")
		})
	}
}

// Issue 16: a model without image input gets a text result that says why
// the image is not shown; an image over the cap is an error result; a
// file named .png that is not an image is read as text.
func TestBinaryReadFileImageLimits(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pic.png"), testPNG(t), 0o600))
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 4<<20)...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.png"), big, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fake.png"), []byte("not an image at all"), 0o600))
	model := newScriptedModel(t, "openai",
		modelCall{"read_file", map[string]any{"path": "pic.png"}},
		modelCall{"read_file", map[string]any{"path": "big.png"}},
		modelCall{"read_file", map[string]any{"path": "fake.png"}})
	client := newToolClient(dir, "allow_once")
	conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{}, "--models-file", imageModelsFile(t, false))
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "look at the pictures"))
	body := model.body(t, 1)
	assert.Empty(t, requestImages(t, "openai", body), "no image goes to a model without image input")
	assert.Contains(t, body, "does not accept image input")

	u, ok := client.final("call_0")
	require.True(t, ok)
	assert.Len(t, toolImages(u), 1, "the client still sees the image")

	u, ok = client.final("call_1")
	require.True(t, ok)
	assert.Equal(t, sdk.ToolCallStatusFailed, *u.Status)
	assert.Contains(t, toolText(u), "over the 4194304-byte limit")

	u, ok = client.final("call_2")
	require.True(t, ok)
	assert.Equal(t, sdk.ToolCallStatusCompleted, *u.Status)
	assert.Equal(t, "     1\tnot an image at all\n", toolText(u), "read as numbered text")
}

// Issue 16: an MCP tool's image result (server-everything's
// get-tiny-image) reaches the model as an image, and the client as an
// image block.
func TestBinaryMCPImageResultReachesTheModel(t *testing.T) {
	node, index := everything(t)
	dir := t.TempDir()
	model := newScriptedModel(t, "anthropic", modelCall{"mcp__everything__get-tiny-image", map[string]any{}})
	client := newToolClient(dir, "allow_once")
	conn, _ := e2eSession(t, "anthropic", model, client, sdk.ClientCapabilities{})
	sess, err := conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: node, Args: []string{index, "stdio"}, Env: []sdk.EnvVariable{}}}}})
	require.NoError(t, err)
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sess.SessionId, "get the tiny image"))
	u, ok := client.final("toolu_0")
	require.True(t, ok)
	imgs := toolImages(u)
	require.Len(t, imgs, 1)
	got := requestImages(t, "anthropic", model.body(t, 1))
	require.Len(t, got, 1, "the image went to the model")
	assert.Equal(t, imgs[0].Data, got[0])
}

// Issue 16: the image branch of read_file reads through the same confined
// filesystem as text: a .png symlink leading out of the workspace, a .png
// under .git and a path outside the roots are refused, and nothing of them
// reaches the model.
func TestBinaryReadFileImageStaysConfined(t *testing.T) {
	outside := t.TempDir()
	secret := append(testPNG(t), []byte("SECRET-PIXELS")...)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.png"), secret, 0o600))
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(dir, "leak.png")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "logo.png"), secret, 0o600))
	model := newScriptedModel(t, "anthropic",
		modelCall{"read_file", map[string]any{"path": "leak.png"}},
		modelCall{"read_file", map[string]any{"path": ".git/logo.png"}},
		modelCall{"read_file", map[string]any{"path": filepath.Join(outside, "secret.png")}})
	client := newToolClient(dir, "allow_once")
	conn, sid := e2eSession(t, "anthropic", model, client, sdk.ClientCapabilities{})
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "look"))
	want := base64.StdEncoding.EncodeToString(secret)
	for i := range 3 {
		u, ok := client.final(fmt.Sprintf("toolu_%d", i))
		require.True(t, ok)
		assert.Equal(t, sdk.ToolCallStatusFailed, *u.Status, "call %d", i)
		assert.Empty(t, toolImages(u), "call %d", i)
	}
	body := model.body(t, 1)
	assert.Empty(t, requestImages(t, "anthropic", body))
	assert.NotContains(t, body, want)
}
