package mcpclient

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-agent/acp-agent/acp"
)

// Result is the outcome of a tool call that reached the server and got an
// answer.
type Result struct {
	// Text is all content flattened for the model, parts joined by "\n":
	//   - text: the text itself;
	//   - image / audio: "[image: <mime>, <N> bytes]" / "[audio: <mime>, <N> bytes]"
	//     (N is the decoded size);
	//   - embedded text resource: its text ("[resource: <uri>]" if empty);
	//   - embedded blob resource and resource link: "[resource: <uri>]".
	// When the server sent no content but structured content, Text is that
	// structured content as JSON.
	Text string
	// Content is the content for the client: text, image and audio (base64
	// + mime), resource links, embedded text resources. An embedded blob
	// resource becomes a resource link (uri, mime, size), so that binary
	// payloads are not forwarded. Content types ACP cannot show are dropped.
	Content []acp.ContentBlock
	// IsError is set when the tool reported a failure (the server's
	// isError): the call itself worked, and Text says what went wrong.
	IsError bool
}

// convertResult turns the SDK's result into a Result.
func convertResult(res *mcp.CallToolResult) Result {
	out := Result{IsError: res.IsError}
	var parts []string
	for _, c := range res.Content {
		text, block, ok := convertContent(c)
		if !ok {
			continue
		}
		parts = append(parts, text)
		out.Content = append(out.Content, block)
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
			out.Content = append(out.Content, acp.TextBlock(string(b)))
		}
	}
	out.Text = strings.Join(parts, "\n")
	return out
}

// convertContent returns the model text and the ACP block of one content
// part; ok is false for kinds that have neither.
func convertContent(c mcp.Content) (text string, block acp.ContentBlock, ok bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text, acp.TextBlock(c.Text), true
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)),
			acp.ContentBlock{Image: &acp.ImageContent{
				Data:     base64.StdEncoding.EncodeToString(c.Data),
				MimeType: c.MIMEType,
			}}, true
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)),
			acp.ContentBlock{Audio: &acp.AudioContent{
				Data:     base64.StdEncoding.EncodeToString(c.Data),
				MimeType: c.MIMEType,
			}}, true
	case *mcp.ResourceLink:
		return resourcePlaceholder(c.URI), acp.ContentBlock{ResourceLink: &acp.ResourceLink{
			URI:         c.URI,
			Name:        c.Name,
			Title:       c.Title,
			Description: c.Description,
			MimeType:    c.MIMEType,
			Size:        c.Size,
		}}, true
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "", acp.ContentBlock{}, false
		}
		if r.Blob != nil {
			size := int64(len(r.Blob))
			return resourcePlaceholder(r.URI), acp.ContentBlock{ResourceLink: &acp.ResourceLink{
				URI:      r.URI,
				Name:     r.URI,
				MimeType: r.MIMEType,
				Size:     &size,
			}}, true
		}
		text := r.Text
		if text == "" {
			text = resourcePlaceholder(r.URI)
		}
		return text, acp.ContentBlock{Resource: &acp.EmbeddedResource{
			Resource: acp.EmbeddedResourceResource{Text: &acp.TextResourceContents{
				URI:      r.URI,
				Text:     r.Text,
				MimeType: r.MIMEType,
			}},
		}}, true
	}
	return "", acp.ContentBlock{}, false
}

func resourcePlaceholder(uri string) string {
	return "[resource: " + uri + "]"
}
