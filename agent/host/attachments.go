package host

import (
	"cmp"
	"fmt"
)

// The text a prompt's attachments become for the model, the same
// whichever protocol version brought them: the model reads resource links
// and embedded resources as text naming their URI (a binary one by its
// size only).

// ResourceLinkText is a resource link as the model reads it.
func ResourceLinkText(name, uri, mimeType, description string) string {
	s := fmt.Sprintf("[Resource link: %s <%s>", name, uri)
	if mimeType != "" {
		s += fmt.Sprintf(" (%s)", mimeType)
	}
	if description != "" {
		s += ": " + description
	}
	return s + "]"
}

// ResourceText is an embedded text resource as the model reads it.
func ResourceText(uri, text string) string {
	return fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", uri, text)
}

// BinaryResourceText stands for an embedded binary resource of base64Len
// base64 bytes, whose content the model is not shown.
func BinaryResourceText(uri, mimeType string, base64Len int) string {
	return fmt.Sprintf("[Binary resource %s (%s, %d base64 bytes) attached; its content is not shown]",
		uri, cmp.Or(mimeType, "application/octet-stream"), base64Len)
}
