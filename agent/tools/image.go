package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// isImagePath reports whether path names an image read_file returns as
// one (by its extension; the content decides what it is).
func isImagePath(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// sniffImage returns the MIME type of a PNG, JPEG, GIF or WebP image by its
// signature, or "".
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// readImage reads the image at path through the confined local
// filesystem (the editor's fs/* carries text only). ok is false when the
// file is not an image after all (its content decides), and read_file
// then reads it as text. An image over the cap is an error that says so.
func (w *Workspace) readImage(ctx context.Context, path string) (res agent.ToolResult, ok bool, err error) {
	data, exists, err := w.local.ReadFile(ctx, path)
	if err != nil {
		return agent.ToolResult{}, false, err
	}
	if !exists {
		return agent.ToolResult{}, false, fmt.Errorf("%s does not exist", w.display(path))
	}
	mime := sniffImage(data)
	if mime == "" {
		return agent.ToolResult{}, false, nil
	}
	if len(data) > agent.MaxToolImageBytes {
		return agent.ToolResult{}, false, fmt.Errorf("%s is a %s image of %d bytes, over the %d-byte limit for images; make a smaller copy (for example with a command) and read that",
			w.display(path), mime, len(data), agent.MaxToolImageBytes)
	}
	desc := fmt.Sprintf("%s: %s image, %d bytes", w.display(path), mime, len(data))
	if w, h, err := imageSize(mime, data); err == nil {
		desc += fmt.Sprintf(", %d×%d pixels", w, h)
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	return agent.ToolResult{
		Text:    desc + ".",
		Images:  []llm.Part{{Type: llm.PartImage, MIMEType: mime, Data: b64}},
		Content: []agent.ToolContent{{Block: &agent.ContentBlock{Type: agent.BlockImage, MIMEType: mime, Data: b64}}, agent.TextContent(desc)},
	}, true, nil
}
