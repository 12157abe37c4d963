package agent

import (
	"encoding/base64"
	"fmt"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// MaxToolImageBytes caps one image a tool returns to the model, decoded;
// providers refuse larger ones (Anthropic: 5 MB per image).
const MaxToolImageBytes = 4 << 20

// maxToolImages caps the images of one tool result.
const maxToolImages = 8

// ImageMIMETypes are the image types models accept in tool results.
var ImageMIMETypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// toolImages keeps the images of a tool result the model can be given:
// of a known type, valid base64, within the size cap, at most
// maxToolImages; the others are dropped (the tool's text says what it
// returned).
func toolImages(parts []llm.Part) []llm.Part {
	var out []llm.Part
	for _, p := range parts {
		if p.Type != llm.PartImage || !imageType(p.MIMEType) || base64.StdEncoding.DecodedLen(len(p.Data)) > MaxToolImageBytes+2 {
			continue
		}
		if n, err := base64.StdEncoding.DecodeString(p.Data); err != nil || len(n) == 0 || len(n) > MaxToolImageBytes {
			continue
		}
		if out = append(out, llm.Part{Type: llm.PartImage, MIMEType: p.MIMEType, Data: p.Data}); len(out) == maxToolImages {
			break
		}
	}
	return out
}

func imageType(mime string) bool {
	for _, t := range ImageMIMETypes {
		if mime == t {
			return true
		}
	}
	return false
}

func hasImage(parts []llm.Part) bool {
	for _, p := range parts {
		if p.Type == llm.PartImage {
			return true
		}
	}
	return false
}

// withoutImages replaces the images of msgs (a tool's result, the user's
// attachment) by a note, for a model without image input; msgs is not
// modified. Sent, a user's image would fail this turn and every later
// one, as the history keeps it.
func withoutImages(msgs []llm.Message, model string) []llm.Message {
	var out []llm.Message
	for i, m := range msgs {
		if (m.Role != llm.RoleTool && m.Role != llm.RoleUser) || !hasImage(m.Content) {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), msgs...)
		}
		parts := make([]llm.Part, 0, len(m.Content))
		for _, p := range m.Content {
			if p.Type == llm.PartImage {
				if m.Role == llm.RoleUser {
					p = llm.TextPart(fmt.Sprintf("\n[The user attached an image (%s), which is not shown: the model %s does not accept image input. "+
						"Tell the user; if the model does read images, an entry with \"imageInput\": true in the models file says so.]", p.MIMEType, model))
				} else {
					p = llm.TextPart(fmt.Sprintf("\n[The tool returned a %s image, which is not shown: the model %s does not accept image input.]", p.MIMEType, model))
				}
			}
			parts = append(parts, p)
		}
		out[i].Content = parts
	}
	if out == nil {
		return msgs
	}
	return out
}
