package host

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-agent/acp-agent/agent"
)

// The stored shapes of what a client was shown: a tool call's display
// and the plan. Session files have always held them in ACP's wire shapes
// (docs/jsonl-format.md), which the host keeps as its own record types:
// each encodes exactly as ACP's type did, members in the same order, so
// files written before and after the host took the store over are the
// same, and decoding is as lenient (and as strict) as ACP's was.
// Content a session core cannot carry (a binary embedded resource, a kind
// of a newer version) is dropped on decode, as it always was.

// displayRecord is a ToolDisplay as stored: the title, kind, locations,
// raw input and content the client was shown, diffs included.
type displayRecord struct {
	Title     string              `json:"title"`
	Kind      agent.ToolKind      `json:"kind,omitempty"`
	Locations []locationRecord    `json:"locations,omitempty"`
	RawInput  json.RawMessage     `json:"rawInput,omitempty"`
	Content   []toolContentRecord `json:"content,omitempty"`
}

type locationRecord struct {
	Path string  `json:"path"`
	Line *uint32 `json:"line,omitempty"`
}

// toolContentRecord is one item of a display: {"type":"content",
// "content":<block>}, {"type":"diff","path","oldText","newText"} or
// {"type":"terminal","terminalId"}. Zero is an item the core does not
// carry (dropped).
type toolContentRecord struct {
	c agent.ToolContent
}

// blockRecord is a content block: {"type":"text","text"}, "image"
// (data, mimeType, uri), "audio" (data, mimeType), "resource_link" (uri,
// name, title, description, mimeType, size) or "resource" (an embedded
// text resource: {"resource":{"uri","text","mimeType"}}).
type blockRecord struct {
	b  agent.ContentBlock
	ok bool
}

// planRecord is a plan as stored: ACP's plan update, with the text of a
// proposed plan (Markdown, or the URI of the file holding it) beside the
// entries when it has one.
type planRecord struct {
	Entries  []planEntryRecord `json:"entries"`
	Markdown string            `json:"markdown,omitempty"`
	URI      string            `json:"uri,omitempty"`
}

type planEntryRecord struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

func toDisplayRecord(d *agent.ToolDisplay) *displayRecord {
	if d == nil {
		return nil
	}
	r := &displayRecord{Title: d.Title, Kind: d.Kind, RawInput: d.RawInput}
	if d.Locations != nil {
		r.Locations = make([]locationRecord, len(d.Locations))
		for i, l := range d.Locations {
			r.Locations[i] = locationRecord{Path: l.Path, Line: l.Line}
		}
	}
	if d.Content != nil {
		r.Content = make([]toolContentRecord, 0, len(d.Content))
		for _, c := range d.Content {
			if c.Block != nil || c.Diff != nil || c.TerminalID != "" {
				r.Content = append(r.Content, toolContentRecord{c})
			}
		}
	}
	return r
}

func (r *displayRecord) display() *agent.ToolDisplay {
	if r == nil {
		return nil
	}
	d := &agent.ToolDisplay{Title: r.Title, Kind: r.Kind, RawInput: r.RawInput}
	if r.Locations != nil {
		d.Locations = make([]agent.Location, len(r.Locations))
		for i, l := range r.Locations {
			d.Locations[i] = agent.Location{Path: l.Path, Line: l.Line}
		}
	}
	if r.Content != nil {
		d.Content = make([]agent.ToolContent, 0, len(r.Content))
		for _, c := range r.Content {
			if c.c.Block != nil || c.c.Diff != nil || c.c.TerminalID != "" {
				d.Content = append(d.Content, c.c)
			}
		}
	}
	return d
}

func (r toolContentRecord) MarshalJSON() ([]byte, error) {
	c := r.c
	switch {
	case c.Block != nil:
		block, err := json.Marshal(blockRecord{b: *c.Block, ok: true})
		if err != nil {
			return nil, err
		}
		return json.Marshal(struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}{"content", block})
	case c.Diff != nil:
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText,omitempty"`
			NewText string  `json:"newText"`
		}{"diff", c.Diff.Path, c.Diff.OldText, c.Diff.NewText})
	case c.TerminalID != "":
		return json.Marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
		}{"terminal", c.TerminalID})
	}
	return nil, errors.New("tool content: nothing set")
}

func (r *toolContentRecord) UnmarshalJSON(data []byte) error {
	*r = toolContentRecord{}
	if string(data) == "null" {
		return nil
	}
	tag, err := recordTag(data, "tool call content")
	if err != nil {
		return err
	}
	switch tag {
	case "content":
		var v struct {
			Content blockRecord `json:"content"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		if v.Content.ok {
			r.c.Block = &v.Content.b
		}
	case "diff":
		var v struct {
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		r.c.Diff = &agent.Diff{Path: v.Path, OldText: v.OldText, NewText: v.NewText}
	case "terminal":
		var v struct {
			TerminalID string `json:"terminalId"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		r.c.TerminalID = v.TerminalID
	}
	return nil
}

func (r blockRecord) MarshalJSON() ([]byte, error) {
	b := r.b
	switch b.Type {
	case agent.BlockImage:
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
			URI      string `json:"uri,omitempty"`
		}{"image", b.Data, b.MIMEType, b.URI})
	case agent.BlockAudio:
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		}{"audio", b.Data, b.MIMEType})
	case agent.BlockResourceLink:
		return json.Marshal(struct {
			Type        string `json:"type"`
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Title       string `json:"title,omitempty"`
			Description string `json:"description,omitempty"`
			MIMEType    string `json:"mimeType,omitempty"`
			Size        *int64 `json:"size,omitempty"`
		}{"resource_link", b.URI, b.Name, b.Title, b.Description, b.MIMEType, b.Size})
	case agent.BlockResource:
		type text struct {
			URI      string `json:"uri"`
			Text     string `json:"text"`
			MIMEType string `json:"mimeType,omitempty"`
		}
		return json.Marshal(struct {
			Type     string `json:"type"`
			Resource text   `json:"resource"`
		}{"resource", text{b.URI, b.Text, b.MIMEType}})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", b.Text})
}

func (r *blockRecord) UnmarshalJSON(data []byte) error {
	*r = blockRecord{}
	if string(data) == "null" {
		return nil
	}
	tag, err := recordTag(data, "content block")
	if err != nil {
		return err
	}
	switch tag {
	case "text":
		var v struct {
			Text string `json:"text"`
		}
		err = json.Unmarshal(data, &v)
		r.b = agent.ContentBlock{Type: agent.BlockText, Text: v.Text}
	case "image":
		var v struct {
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
			URI      string `json:"uri"`
		}
		err = json.Unmarshal(data, &v)
		r.b = agent.ContentBlock{Type: agent.BlockImage, Data: v.Data, MIMEType: v.MIMEType, URI: v.URI}
	case "audio":
		var v struct {
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		}
		err = json.Unmarshal(data, &v)
		r.b = agent.ContentBlock{Type: agent.BlockAudio, Data: v.Data, MIMEType: v.MIMEType}
	case "resource_link":
		var v struct {
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
			Size        *int64 `json:"size"`
		}
		err = json.Unmarshal(data, &v)
		r.b = agent.ContentBlock{Type: agent.BlockResourceLink, URI: v.URI, Name: v.Name, Title: v.Title,
			Description: v.Description, MIMEType: v.MIMEType, Size: v.Size}
	case "resource":
		var v struct {
			Resource json.RawMessage `json:"resource"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		return r.resource(v.Resource)
	default:
		return nil // a kind of a newer version: not carried
	}
	if err != nil {
		return err
	}
	r.ok = true
	return nil
}

// resource decodes an embedded resource's contents: a text resource is
// kept, a binary one (blob) is not carried.
func (r *blockRecord) resource(data json.RawMessage) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	var probe struct {
		Text *json.RawMessage `json:"text"`
		Blob *json.RawMessage `json:"blob"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	switch {
	case probe.Text != nil:
		var v struct {
			URI      string `json:"uri"`
			Text     string `json:"text"`
			MIMEType string `json:"mimeType"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		r.b, r.ok = agent.ContentBlock{Type: agent.BlockResource, URI: v.URI, Text: v.Text, MIMEType: v.MIMEType}, true
		return nil
	case probe.Blob != nil:
		var v struct {
			URI  string `json:"uri"`
			Blob string `json:"blob"`
		}
		return json.Unmarshal(data, &v)
	}
	return errors.New("resource: neither \"text\" nor \"blob\" is present")
}

// recordTag is a tagged object's "type", which must be there.
func recordTag(data []byte, name string) (string, error) {
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if probe.Type == nil {
		return "", fmt.Errorf("%s: missing \"type\"", name)
	}
	return *probe.Type, nil
}

func toPlanRecord(p *agent.Plan) *planRecord {
	if p == nil {
		return nil
	}
	out := &planRecord{Entries: make([]planEntryRecord, len(p.Entries)), Markdown: p.Markdown, URI: p.URI}
	for i, e := range p.Entries {
		out.Entries[i] = planEntryRecord{Content: e.Content, Priority: e.Priority, Status: e.Status}
	}
	return out
}

func (r *planRecord) plan() *agent.Plan {
	if r == nil {
		return nil
	}
	out := &agent.Plan{Entries: make([]agent.PlanEntry, len(r.Entries)), Markdown: r.Markdown, URI: r.URI}
	for i, e := range r.Entries {
		out.Entries[i] = agent.PlanEntry{Content: e.Content, Priority: e.Priority, Status: e.Status}
	}
	return out
}
