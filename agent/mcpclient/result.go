package mcpclient

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-agent/acp-agent/agent"
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
	// payloads are not forwarded. Content types a client cannot show are
	// dropped.
	Content []agent.ContentBlock
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
			out.Content = append(out.Content, agent.ContentBlock{Type: agent.BlockText, Text: string(b)})
		}
	}
	out.Text = strings.Join(parts, "\n")
	return out
}

// convertContent returns the model text and the client's block of one
// content part; ok is false for kinds that have neither.
func convertContent(c mcp.Content) (text string, block agent.ContentBlock, ok bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text, agent.ContentBlock{Type: agent.BlockText, Text: c.Text}, true
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)),
			agent.ContentBlock{Type: agent.BlockImage, Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}, true
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)),
			agent.ContentBlock{Type: agent.BlockAudio, Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}, true
	case *mcp.ResourceLink:
		return resourcePlaceholder(c.URI), agent.ContentBlock{Type: agent.BlockResourceLink,
			URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size}, true
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "", agent.ContentBlock{}, false
		}
		if r.Blob != nil {
			size := int64(len(r.Blob))
			return resourcePlaceholder(r.URI), agent.ContentBlock{Type: agent.BlockResourceLink,
				URI: r.URI, Name: r.URI, MIMEType: r.MIMEType, Size: &size}, true
		}
		text := r.Text
		if text == "" {
			text = resourcePlaceholder(r.URI)
		}
		return text, agent.ContentBlock{Type: agent.BlockResource, URI: r.URI, Text: r.Text, MIMEType: r.MIMEType}, true
	}
	return "", agent.ContentBlock{}, false
}

func resourcePlaceholder(uri string) string {
	return "[resource: " + uri + "]"
}
