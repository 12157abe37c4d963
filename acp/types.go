package acp

// Wire types of ACP v1. Type names are the "$defs" names of the official JSON
// Schema (testdata/acp-schema/v1/schema.json); field names are the schema's
// camelCase member names in Go style (sessionId → SessionID, mcpServers →
// MCPServers, cwd → CWD).
//
// Encoding rules shared by every type:
//   - Every object type carries `Meta json.RawMessage` for "_meta". It is kept
//     verbatim (including an explicit null) and omitted when nil.
//   - Absent optionals are omitted. Optional strings and string enums use
//     omitempty (the empty string is never a meaningful value for them);
//     optional numbers and booleans whose zero value means something are
//     pointers. Optional slices and maps use omitzero: nil is omitted, an
//     empty non-nil slice is sent as []. Capability objects with defaults are
//     values with omitzero.
//   - Required arrays are always sent as arrays: a nil slice encodes as [].
//   - Fields where the schema gives null its own meaning (omitted = unchanged,
//     null = clear) use Nullable[T].
//   - Discriminated unions are structs with one pointer per variant plus
//     Unknown, which receives variants this package does not know and sends
//     them back verbatim. Exactly one pointer should be set; when several are
//     set, the first in field order wins.
//   - Plain identifier types of the schema (SessionId, ToolCallId, ...) are
//     aliases of string, so any string can be used where they are expected.

import (
	"encoding/json"
	"fmt"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// ProtocolVersion is the ACP major protocol version (schema: uint16 integer).
type ProtocolVersion uint16

// ProtocolVersionV1 is the stable protocol version this package implements.
const ProtocolVersionV1 ProtocolVersion = 1

// Identifier types of the schema. They are opaque strings on the wire.
type (
	SessionId            = string
	ToolCallId           = string
	TerminalId           = string
	MessageId            = string
	PermissionOptionId   = string
	AuthMethodId         = string
	SessionModeId        = string
	SessionConfigId      = string
	SessionConfigValueId = string
	SessionConfigGroupId = string
	ElicitationId        = string
	CompactionId         = string // SDK 2.4.0 stable
)

// RequestId is a JSON-RPC request id as raw JSON: a string, an integer or
// null. A nil RequestId encodes as null.
type RequestId = json.RawMessage

// StopReason is why a prompt turn ended.
type StopReason string

// StopReason values.
const (
	StopReasonEndTurn         StopReason = "end_turn"
	StopReasonMaxTokens       StopReason = "max_tokens"
	StopReasonMaxTurnRequests StopReason = "max_turn_requests"
	StopReasonRefusal         StopReason = "refusal"
	StopReasonCancelled       StopReason = "cancelled"
)

// ToolKind categorises a tool call for the client's UI.
type ToolKind string

// ToolKind values.
const (
	ToolKindRead       ToolKind = "read"
	ToolKindEdit       ToolKind = "edit"
	ToolKindDelete     ToolKind = "delete"
	ToolKindMove       ToolKind = "move"
	ToolKindSearch     ToolKind = "search"
	ToolKindExecute    ToolKind = "execute"
	ToolKindThink      ToolKind = "think"
	ToolKindFetch      ToolKind = "fetch"
	ToolKindSwitchMode ToolKind = "switch_mode"
	ToolKindOther      ToolKind = "other"
)

// ToolCallStatus is the execution state of a tool call.
type ToolCallStatus string

// ToolCallStatus values.
const (
	ToolCallStatusPending    ToolCallStatus = "pending"
	ToolCallStatusInProgress ToolCallStatus = "in_progress"
	ToolCallStatusCompleted  ToolCallStatus = "completed"
	ToolCallStatusFailed     ToolCallStatus = "failed"
)

// PermissionOptionKind hints how the client presents a permission option.
type PermissionOptionKind string

// PermissionOptionKind values.
const (
	PermissionOptionKindAllowOnce    PermissionOptionKind = "allow_once"
	PermissionOptionKindAllowAlways  PermissionOptionKind = "allow_always"
	PermissionOptionKindRejectOnce   PermissionOptionKind = "reject_once"
	PermissionOptionKindRejectAlways PermissionOptionKind = "reject_always"
)

// PlanEntryPriority is the priority of a plan entry.
type PlanEntryPriority string

// PlanEntryPriority values.
const (
	PlanEntryPriorityHigh   PlanEntryPriority = "high"
	PlanEntryPriorityMedium PlanEntryPriority = "medium"
	PlanEntryPriorityLow    PlanEntryPriority = "low"
)

// PlanEntryStatus is the state of a plan entry.
type PlanEntryStatus string

// PlanEntryStatus values.
const (
	PlanEntryStatusPending    PlanEntryStatus = "pending"
	PlanEntryStatusInProgress PlanEntryStatus = "in_progress"
	PlanEntryStatusCompleted  PlanEntryStatus = "completed"
)

// Role is a conversation role, used in Annotations.audience.
type Role string

// Role values.
const (
	RoleAssistant Role = "assistant"
	RoleUser      Role = "user"
)

// SessionConfigOptionCategory is a semantic hint for a config option. Custom
// categories start with "_"; unknown categories must be tolerated.
type SessionConfigOptionCategory string

// SessionConfigOptionCategory values.
const (
	SessionConfigOptionCategoryMode         SessionConfigOptionCategory = "mode"
	SessionConfigOptionCategoryModel        SessionConfigOptionCategory = "model"
	SessionConfigOptionCategoryModelConfig  SessionConfigOptionCategory = "model_config"
	SessionConfigOptionCategoryThoughtLevel SessionConfigOptionCategory = "thought_level"
)

// NoticeSeverity is the presentation hint of a Notice (SDK 2.4.0 stable).
// Unknown values must be tolerated.
type NoticeSeverity string

// NoticeSeverity values.
const (
	NoticeSeverityInfo    NoticeSeverity = "info"
	NoticeSeverityWarning NoticeSeverity = "warning"
	NoticeSeverityError   NoticeSeverity = "error"
)

// CompactionStatus is the lifecycle state of a context compaction (SDK 2.4.0
// stable). Unknown values must be tolerated.
type CompactionStatus string

// CompactionStatus values.
const (
	CompactionStatusInProgress CompactionStatus = "in_progress"
	CompactionStatusCompleted  CompactionStatus = "completed"
	CompactionStatusFailed     CompactionStatus = "failed"
	CompactionStatusCancelled  CompactionStatus = "cancelled"
)

// Nullable is an optional member whose explicit null has its own meaning,
// typically "omitted = leave unchanged, null = clear" (for example
// SessionInfoUpdate.title). It has three states:
//
//	Nullable[T]{}                  absent: omitted on the wire (use the omitzero tag)
//	Null[T]()                      present as null
//	NullableOf(v)                  present with value v
//
// Fields of this type must be tagged `json:",omitzero"`; IsZero reports the
// absent state. Decoding sets Present for any member found, and Null when it
// was null. Note that NullableOf of a nil slice encodes as null: use an empty
// slice for []. It is v2's type (acpv2.Nullable), which v2's upserts use
// throughout.
type Nullable[T any] = acpv2.Nullable[T]

// NullableOf returns a present, non-null Nullable holding v.
func NullableOf[T any](v T) Nullable[T] { return acpv2.Some(v) }

// Null returns a Nullable that is present as null.
func Null[T any]() Nullable[T] { return acpv2.Null[T]() }

// UnknownVariant holds a union variant this package does not know: Tag is
// its discriminator value ("" when the union is untagged or the tag was
// absent) and Raw the complete JSON object, sent back verbatim on encode.
type UnknownVariant struct {
	Tag string
	Raw json.RawMessage
}

func (u *UnknownVariant) marshal(union string) ([]byte, error) {
	if len(u.Raw) == 0 {
		return nil, fmt.Errorf("acp: %s: unknown variant %q has no raw JSON", union, u.Tag)
	}
	return u.Raw, nil
}
