package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CreateElicitationRequest is the params of elicitation/create (agent →
// client): ask the user for structured input (Form) or send them to a URL
// (URL). On the wire the mode's members are flattened next to "message"
// and "mode". Unknown modes go to Unknown (the whole object, re-encoded
// verbatim; Message and Meta are still decoded).
type CreateElicitationRequest struct {
	Message string               `json:"message"`
	Form    *ElicitationFormMode `json:"-"` // mode "form"
	URL     *ElicitationUrlMode  `json:"-"` // mode "url"
	Unknown *UnknownVariant      `json:"-"`
	Meta    json.RawMessage      `json:"_meta,omitempty"`
}

// Elicitation modes.
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"
)

var (
	prefixElicitationForm = unionPrefix("mode", ElicitationModeForm)
	prefixElicitationURL  = unionPrefix("mode", ElicitationModeURL)
)

// Tag returns the "mode", or "" when no variant is set.
func (r CreateElicitationRequest) Tag() string {
	switch {
	case r.Form != nil:
		return ElicitationModeForm
	case r.URL != nil:
		return ElicitationModeURL
	case r.Unknown != nil:
		return r.Unknown.Tag
	}
	return ""
}

// MarshalJSON encodes message, mode and the mode's members.
func (r CreateElicitationRequest) MarshalJSON() ([]byte, error) {
	if r.Form == nil && r.URL == nil && r.Unknown != nil {
		return r.Unknown.marshal("CreateElicitationRequest")
	}
	type plain CreateElicitationRequest
	base, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	var mode []byte
	switch {
	case r.Form != nil:
		mode, err = marshalTagged(prefixElicitationForm, r.Form)
	case r.URL != nil:
		mode, err = marshalTagged(prefixElicitationURL, r.URL)
	default:
		return nil, emptyUnionError("CreateElicitationRequest")
	}
	if err != nil {
		return nil, err
	}
	return mergeObjects(base, mode), nil
}

// UnmarshalJSON decodes message and meta, then the mode by "mode".
func (r *CreateElicitationRequest) UnmarshalJSON(data []byte) error {
	type plain CreateElicitationRequest
	var base plain
	if err := json.Unmarshal(data, &base); err != nil {
		return err
	}
	tag, err := requireTag(data, "mode", "elicitation request")
	if err != nil {
		return err
	}
	*r = CreateElicitationRequest(base)
	switch tag {
	case ElicitationModeForm:
		r.Form, err = decodeVariant[ElicitationFormMode](data)
	case ElicitationModeURL:
		r.URL, err = decodeVariant[ElicitationUrlMode](data)
	default:
		r.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// ElicitationScope says what an elicitation belongs to: a session (and
// optionally a tool call) or a JSON-RPC request. On the wire its members are
// flattened into the mode; it is told apart by "sessionId" vs "requestId".
type ElicitationScope struct {
	Session *ElicitationSessionScope
	Request *ElicitationRequestScope
}

func (s ElicitationScope) marshal() ([]byte, error) {
	switch {
	case s.Session != nil:
		return json.Marshal(s.Session)
	case s.Request != nil:
		return json.Marshal(s.Request)
	}
	return nil, emptyUnionError("ElicitationScope")
}

func (s *ElicitationScope) unmarshal(data []byte) error {
	var probe struct {
		SessionID *json.RawMessage `json:"sessionId"`
		RequestID *json.RawMessage `json:"requestId"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	*s = ElicitationScope{}
	var err error
	switch {
	case probe.SessionID != nil:
		s.Session, err = decodeVariant[ElicitationSessionScope](data)
	case probe.RequestID != nil:
		s.Request, err = decodeVariant[ElicitationRequestScope](data)
	default:
		err = fmt.Errorf("elicitation: neither \"sessionId\" nor \"requestId\" is present")
	}
	return err
}

// ElicitationSessionScope ties an elicitation to a session and optionally
// a tool call.
type ElicitationSessionScope struct {
	SessionID  SessionId  `json:"sessionId"`
	ToolCallID ToolCallId `json:"toolCallId,omitempty"`
}

// ElicitationRequestScope ties an elicitation to a JSON-RPC request.
type ElicitationRequestScope struct {
	RequestID RequestId `json:"requestId"` // nil encodes as null
}

// ElicitationFormMode is the "form" mode: RequestedSchema describes the
// fields to ask for. Form mode must not ask for secrets.
type ElicitationFormMode struct {
	Scope           ElicitationScope  `json:"-"`
	RequestedSchema ElicitationSchema `json:"requestedSchema"`
}

// MarshalJSON flattens the scope into the mode.
func (m ElicitationFormMode) MarshalJSON() ([]byte, error) {
	type plain ElicitationFormMode
	body, err := json.Marshal(plain(m))
	if err != nil {
		return nil, err
	}
	scope, err := m.Scope.marshal()
	if err != nil {
		return nil, err
	}
	return mergeObjects(scope, body), nil
}

// UnmarshalJSON reads the flattened scope too.
func (m *ElicitationFormMode) UnmarshalJSON(data []byte) error {
	type plain ElicitationFormMode
	var v plain
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*m = ElicitationFormMode(v)
	return m.Scope.unmarshal(data)
}

// ElicitationUrlMode is the "url" mode: the user is sent to URL; completion
// is announced with elicitation/complete carrying ElicitationID.
type ElicitationUrlMode struct {
	Scope         ElicitationScope `json:"-"`
	ElicitationID ElicitationId    `json:"elicitationId"`
	URL           string           `json:"url"`
}

// MarshalJSON flattens the scope into the mode.
func (m ElicitationUrlMode) MarshalJSON() ([]byte, error) {
	type plain ElicitationUrlMode
	body, err := json.Marshal(plain(m))
	if err != nil {
		return nil, err
	}
	scope, err := m.Scope.marshal()
	if err != nil {
		return nil, err
	}
	return mergeObjects(scope, body), nil
}

// UnmarshalJSON reads the flattened scope too.
func (m *ElicitationUrlMode) UnmarshalJSON(data []byte) error {
	type plain ElicitationUrlMode
	var v plain
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*m = ElicitationUrlMode(v)
	return m.Scope.unmarshal(data)
}

// ElicitationSchemaType is the type of an ElicitationSchema; only "object".
type ElicitationSchemaType string

// ElicitationSchemaTypeObject is the only ElicitationSchemaType.
const ElicitationSchemaTypeObject ElicitationSchemaType = "object"

// ElicitationSchema is the restricted JSON Schema of a form: a flat object
// of primitive properties.
type ElicitationSchema struct {
	Type        ElicitationSchemaType                `json:"type,omitempty"` // default "object"
	Title       string                               `json:"title,omitempty"`
	Description string                               `json:"description,omitempty"`
	Properties  map[string]ElicitationPropertySchema `json:"properties,omitzero"`
	Required    []string                             `json:"required,omitzero"`
	Meta        json.RawMessage                      `json:"_meta,omitempty"`
}

// ElicitationPropertySchema is one form property (tag "type").
type ElicitationPropertySchema struct {
	String  *StringPropertySchema      // "string"
	Number  *NumberPropertySchema      // "number"
	Integer *IntegerPropertySchema     // "integer"
	Boolean *BooleanPropertySchema     // "boolean"
	Array   *MultiSelectPropertySchema // "array"
	Unknown *UnknownVariant
}

var (
	prefixPropString  = unionPrefix("type", "string")
	prefixPropNumber  = unionPrefix("type", "number")
	prefixPropInteger = unionPrefix("type", "integer")
	prefixPropBoolean = unionPrefix("type", "boolean")
	prefixPropArray   = unionPrefix("type", "array")
)

// MarshalJSON encodes the set variant with its "type".
func (p ElicitationPropertySchema) MarshalJSON() ([]byte, error) {
	switch {
	case p.String != nil:
		return marshalTagged(prefixPropString, p.String)
	case p.Number != nil:
		return marshalTagged(prefixPropNumber, p.Number)
	case p.Integer != nil:
		return marshalTagged(prefixPropInteger, p.Integer)
	case p.Boolean != nil:
		return marshalTagged(prefixPropBoolean, p.Boolean)
	case p.Array != nil:
		return marshalTagged(prefixPropArray, p.Array)
	case p.Unknown != nil:
		return p.Unknown.marshal("ElicitationPropertySchema")
	}
	return nil, emptyUnionError("ElicitationPropertySchema")
}

// UnmarshalJSON decodes by "type"; unknown types go to Unknown.
func (p *ElicitationPropertySchema) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, err := requireTag(data, "type", "property schema")
	if err != nil {
		return err
	}
	*p = ElicitationPropertySchema{}
	switch tag {
	case "string":
		p.String, err = decodeVariant[StringPropertySchema](data)
	case "number":
		p.Number, err = decodeVariant[NumberPropertySchema](data)
	case "integer":
		p.Integer, err = decodeVariant[IntegerPropertySchema](data)
	case "boolean":
		p.Boolean, err = decodeVariant[BooleanPropertySchema](data)
	case "array":
		p.Array, err = decodeVariant[MultiSelectPropertySchema](data)
	default:
		p.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// StringFormat is a format constraint of a string property.
type StringFormat string

// StringFormat values.
const (
	StringFormatEmail    StringFormat = "email"
	StringFormatURI      StringFormat = "uri"
	StringFormatDate     StringFormat = "date"
	StringFormatDateTime StringFormat = "date-time"
)

// StringPropertySchema is a string property; Enum or OneOf make it a
// single-select.
type StringPropertySchema struct {
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MinLength   *uint32         `json:"minLength,omitempty"`
	MaxLength   *uint32         `json:"maxLength,omitempty"`
	Pattern     string          `json:"pattern,omitempty"`
	Format      StringFormat    `json:"format,omitempty"`
	Default     *string         `json:"default,omitempty"`
	Enum        []string        `json:"enum,omitzero"`
	OneOf       []EnumOption    `json:"oneOf,omitzero"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// NumberPropertySchema is a floating-point property.
type NumberPropertySchema struct {
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Minimum     *float64        `json:"minimum,omitempty"`
	Maximum     *float64        `json:"maximum,omitempty"`
	Default     *float64        `json:"default,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// IntegerPropertySchema is an integer property.
type IntegerPropertySchema struct {
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Minimum     *int64          `json:"minimum,omitempty"`
	Maximum     *int64          `json:"maximum,omitempty"`
	Default     *int64          `json:"default,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// BooleanPropertySchema is a boolean property.
type BooleanPropertySchema struct {
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Default     *bool           `json:"default,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// MultiSelectPropertySchema is a multi-select property (type "array").
type MultiSelectPropertySchema struct {
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	MinItems    *uint64          `json:"minItems,omitempty"`
	MaxItems    *uint64          `json:"maxItems,omitempty"`
	Items       MultiSelectItems `json:"items"`
	Default     []string         `json:"default,omitzero"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// MultiSelectItems are the choices of a multi-select: untitled strings
// ("type":"string" with "enum") or titled options (no "type", "anyOf").
// Other types go to Unknown.
type MultiSelectItems struct {
	String  *StringMultiSelectItems // "string"
	Titled  *TitledMultiSelectItems // no "type"
	Unknown *UnknownVariant
}

var prefixItemsString = unionPrefix("type", "string")

// MarshalJSON encodes the set variant.
func (m MultiSelectItems) MarshalJSON() ([]byte, error) {
	switch {
	case m.String != nil:
		return marshalTagged(prefixItemsString, m.String)
	case m.Titled != nil:
		return json.Marshal(m.Titled)
	case m.Unknown != nil:
		return m.Unknown.marshal("MultiSelectItems")
	}
	return nil, emptyUnionError("MultiSelectItems")
}

// UnmarshalJSON decodes by "type": none is Titled.
func (m *MultiSelectItems) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	tag, ok, err := readTag(data, "type", "items")
	if err != nil {
		return err
	}
	*m = MultiSelectItems{}
	switch {
	case !ok:
		m.Titled, err = decodeVariant[TitledMultiSelectItems](data)
	case tag == "string":
		m.String, err = decodeVariant[StringMultiSelectItems](data)
	default:
		m.Unknown = &UnknownVariant{Tag: tag, Raw: cloneRaw(data)}
	}
	return err
}

// StringMultiSelectItems are untitled multi-select choices.
type StringMultiSelectItems struct {
	Enum []string        `json:"enum"` // required: nil encodes as []
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil Enum as [].
func (s StringMultiSelectItems) MarshalJSON() ([]byte, error) {
	type plain StringMultiSelectItems
	s.Enum = nonNil(s.Enum)
	return json.Marshal(plain(s))
}

// TitledMultiSelectItems are titled multi-select choices.
type TitledMultiSelectItems struct {
	AnyOf []EnumOption    `json:"anyOf"` // required: nil encodes as []
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes a nil AnyOf as [].
func (t TitledMultiSelectItems) MarshalJSON() ([]byte, error) {
	type plain TitledMultiSelectItems
	t.AnyOf = nonNil(t.AnyOf)
	return json.Marshal(plain(t))
}

// EnumOption is a titled choice.
type EnumOption struct {
	Const       string          `json:"const"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationAction is the user's answer to an elicitation.
type ElicitationAction string

// ElicitationAction values.
const (
	ElicitationActionAccept  ElicitationAction = "accept"
	ElicitationActionDecline ElicitationAction = "decline"
	ElicitationActionCancel  ElicitationAction = "cancel"
)

// CreateElicitationResponse is the result of elicitation/create. The
// members of ElicitationAcceptAction (content) are flattened in and only
// meaningful for Action == "accept". Unknown actions keep their Action
// string; their other members are dropped.
type CreateElicitationResponse struct {
	Action ElicitationAction `json:"action"`
	ElicitationAcceptAction
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationAcceptAction is the payload of an "accept" answer: the form
// values by property name (nil = none).
type ElicitationAcceptAction struct {
	Content map[string]ElicitationContentValue `json:"content,omitzero"`
}

// ElicitationContentValue is one submitted form value: a string, an
// integer, a number, a boolean or a list of strings. Exactly one field is
// set (Strings non-nil for a list). On decode a JSON number without a
// fraction or exponent is an Integer.
type ElicitationContentValue struct {
	String  *string
	Integer *int64
	Number  *float64
	Boolean *bool
	Strings []string
}

// MarshalJSON encodes the set value.
func (v ElicitationContentValue) MarshalJSON() ([]byte, error) {
	switch {
	case v.String != nil:
		return json.Marshal(*v.String)
	case v.Integer != nil:
		return json.Marshal(*v.Integer)
	case v.Number != nil:
		return json.Marshal(*v.Number)
	case v.Boolean != nil:
		return json.Marshal(*v.Boolean)
	case v.Strings != nil:
		return json.Marshal(v.Strings)
	}
	return nil, emptyUnionError("ElicitationContentValue")
}

// UnmarshalJSON decodes by JSON kind.
func (v *ElicitationContentValue) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	*v = ElicitationContentValue{}
	if len(data) == 0 {
		return fmt.Errorf("elicitation value: empty")
	}
	var err error
	switch c := data[0]; {
	case c == '"':
		var s string
		err = json.Unmarshal(data, &s)
		v.String = &s
	case c == 't' || c == 'f':
		var b bool
		err = json.Unmarshal(data, &b)
		v.Boolean = &b
	case c == '[':
		var ss []string
		err = json.Unmarshal(data, &ss)
		v.Strings = nonNil(ss)
	case c == '-' || (c >= '0' && c <= '9'):
		if bytes.ContainsAny(data, ".eE") {
			var f float64
			err = json.Unmarshal(data, &f)
			v.Number = &f
		} else {
			var i int64
			err = json.Unmarshal(data, &i)
			v.Integer = &i
		}
	default:
		err = fmt.Errorf("elicitation value: unsupported JSON %.20s", data)
	}
	return err
}

// CompleteElicitationNotification is the params of elicitation/complete
// (agent → client, notification): a URL-mode elicitation finished.
type CompleteElicitationNotification struct {
	ElicitationID ElicitationId   `json:"elicitationId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}
