package acp

import (
	"encoding/json"
	"fmt"
)

// ContentBlock is a piece of content in prompts, messages and tool output
// (tag "type"). text and resource_link are always allowed in prompts; image,
// audio and resource are gated by PromptCapabilities.
type ContentBlock struct {
	Text         *TextContent      // "text"
	Image        *ImageContent     // "image"
	Audio        *AudioContent     // "audio"
	ResourceLink *ResourceLink     // "resource_link"
	Resource     *EmbeddedResource // "resource"
	Unknown      *UnknownVariant
}

// ContentBlock tags.
const (
	ContentBlockText         = "text"
	ContentBlockImage        = "image"
	ContentBlockAudio        = "audio"
	ContentBlockResourceLink = "resource_link"
	ContentBlockResource     = "resource"
)

var (
	prefixContentText         = unionPrefix("type", ContentBlockText)
	prefixContentImage        = unionPrefix("type", ContentBlockImage)
	prefixContentAudio        = unionPrefix("type", ContentBlockAudio)
	prefixContentResourceLink = unionPrefix("type", ContentBlockResourceLink)
	prefixContentResource     = unionPrefix("type", ContentBlockResource)
)

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock {
	return ContentBlock{Text: &TextContent{Text: text}}
}

// Tag returns the "type" of the set variant, or "" when none is set.
func (c ContentBlock) Tag() string {
	switch {
	case c.Text != nil:
		return ContentBlockText
	case c.Image != nil:
		return ContentBlockImage
	case c.Audio != nil:
		return ContentBlockAudio
	case c.ResourceLink != nil:
		return ContentBlockResourceLink
	case c.Resource != nil:
		return ContentBlockResource
	case c.Unknown != nil:
		return c.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes the set variant with its "type".
func (c ContentBlock) MarshalJSON() ([]byte, error) {
	switch {
	case c.Text != nil:
		return marshalTagged(prefixContentText, c.Text)
	case c.Image != nil:
		return marshalTagged(prefixContentImage, c.Image)
	case c.Audio != nil:
		return marshalTagged(prefixContentAudio, c.Audio)
	case c.ResourceLink != nil:
		return marshalTagged(prefixContentResourceLink, c.ResourceLink)
	case c.Resource != nil:
		return marshalTagged(prefixContentResource, c.Resource)
	case c.Unknown != nil:
		return c.Unknown.marshal("ContentBlock")
	}
	return nil, emptyUnionError("ContentBlock")
}

// appendJSON appends the block's encoding to dst. A plain text block (the
// streaming hot path) is written directly; other blocks use MarshalJSON.
func (c *ContentBlock) appendJSON(dst []byte) ([]byte, error) {
	if t := c.Text; t != nil && t.Annotations == nil && t.Meta == nil {
		dst = append(dst, prefixContentText...)
		dst = append(dst, `,"text":`...)
		dst = appendJSONString(dst, t.Text)
		return append(dst, '}'), nil
	}
	b, err := c.MarshalJSON()
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// UnmarshalJSON decodes by "type"; unknown types go to Unknown.
func (c *ContentBlock) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, err := requireTag(data, "type", "content block")
	if err != nil {
		return err
	}
	*c = ContentBlock{}
	switch tag {
	case ContentBlockText:
		c.Text, err = decodeVariant[TextContent](data)
	case ContentBlockImage:
		c.Image, err = decodeVariant[ImageContent](data)
	case ContentBlockAudio:
		c.Audio, err = decodeVariant[AudioContent](data)
	case ContentBlockResourceLink:
		c.ResourceLink, err = decodeVariant[ResourceLink](data)
	case ContentBlockResource:
		c.Resource, err = decodeVariant[EmbeddedResource](data)
	default:
		c.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// TextContent is plain text.
type TextContent struct {
	Text        string          `json:"text"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ImageContent is a base64-encoded image.
type ImageContent struct {
	Data        string          `json:"data"` // base64
	MimeType    string          `json:"mimeType"`
	URI         string          `json:"uri,omitempty"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// AudioContent is base64-encoded audio.
type AudioContent struct {
	Data        string          `json:"data"` // base64
	MimeType    string          `json:"mimeType"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceLink references a resource the agent can fetch itself.
type ResourceLink struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// EmbeddedResource is resource contents embedded in a prompt or message.
type EmbeddedResource struct {
	Resource    EmbeddedResourceResource `json:"resource"`
	Annotations *Annotations             `json:"annotations,omitempty"`
	Meta        json.RawMessage          `json:"_meta,omitempty"`
}

// EmbeddedResourceResource is the untagged union of text and blob resource
// contents, told apart by a "text" or "blob" member.
type EmbeddedResourceResource struct {
	Text *TextResourceContents
	Blob *BlobResourceContents
}

// MarshalJSON encodes the set variant.
func (r EmbeddedResourceResource) MarshalJSON() ([]byte, error) {
	switch {
	case r.Text != nil:
		return json.Marshal(r.Text)
	case r.Blob != nil:
		return json.Marshal(r.Blob)
	}
	return nil, emptyUnionError("EmbeddedResourceResource")
}

// UnmarshalJSON picks text contents when "text" is present, else blob
// contents when "blob" is present.
func (r *EmbeddedResourceResource) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	var probe struct {
		Text *json.RawMessage `json:"text"`
		Blob *json.RawMessage `json:"blob"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	*r = EmbeddedResourceResource{}
	var err error
	switch {
	case probe.Text != nil:
		r.Text, err = decodeVariant[TextResourceContents](data)
	case probe.Blob != nil:
		r.Blob, err = decodeVariant[BlobResourceContents](data)
	default:
		err = fmt.Errorf("resource: neither \"text\" nor \"blob\" is present")
	}
	return err
}

// TextResourceContents is a text resource.
type TextResourceContents struct {
	URI      string          `json:"uri"`
	Text     string          `json:"text"`
	MimeType string          `json:"mimeType,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// BlobResourceContents is a binary resource, base64-encoded.
type BlobResourceContents struct {
	URI      string          `json:"uri"`
	Blob     string          `json:"blob"` // base64
	MimeType string          `json:"mimeType,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// Annotations are optional hints on content (as in MCP).
type Annotations struct {
	Audience     []Role          `json:"audience,omitzero"`
	LastModified string          `json:"lastModified,omitempty"`
	Priority     *float64        `json:"priority,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}
