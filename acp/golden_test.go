package acp

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/schemacheck"
)

// goldenUpdate rewrites the fixtures from their decoded-and-re-encoded form:
// go test ./acp -run Golden -update
var goldenUpdate = flag.Bool("update", false, "rewrite golden files")

// goldenDir holds one JSON file per wire example, named <Type>[_<case>].json.
var goldenDir = filepath.Join("..", "testdata", "golden", "acp")

// goldenSchema says which schema file a fixture is validated against.
type goldenSchema int

const (
	goldenStable      goldenSchema = iota // testdata/acp-schema/v1/schema.json
	goldenUnstable                        // v1/schema.unstable.json
	goldenSDK                             // npm-sdk-2.4.0/v1/schema.json
	goldenExtension                       // testdata/acp-agent-schema/extensions.json
	goldenSDKUnstable                     // npm-sdk-2.4.0/v1/schema.unstable.json
)

type goldenCase struct {
	newValue func() any // a pointer to a zero Go value to decode into
	def      string     // schema $defs entry
	schema   goldenSchema
}

func goldenOf[T any](def string, schema goldenSchema) goldenCase {
	return goldenCase{newValue: func() any { return new(T) }, def: def, schema: schema}
}

// goldenTable maps each fixture file (without .json) to its Go type and
// schema definition.
var goldenTable = map[string]goldenCase{
	"InitializeRequest":                  goldenOf[InitializeRequest]("InitializeRequest", goldenStable),
	"InitializeRequest_minimal":          goldenOf[InitializeRequest]("InitializeRequest", goldenStable),
	"InitializeRequest_sdk_session_caps": goldenOf[InitializeRequest]("InitializeRequest", goldenSDK),
	"InitializeResponse":                 goldenOf[InitializeResponse]("InitializeResponse", goldenStable),
	"InitializeResponse_minimal":         goldenOf[InitializeResponse]("InitializeResponse", goldenStable),
	"InitializeResponse_unstable_fork":   goldenOf[InitializeResponse]("InitializeResponse", goldenUnstable),
	"AuthenticateRequest":                goldenOf[AuthenticateRequest]("AuthenticateRequest", goldenStable),
	"AuthenticateResponse":               goldenOf[AuthenticateResponse]("AuthenticateResponse", goldenStable),
	"LogoutRequest":                      goldenOf[LogoutRequest]("LogoutRequest", goldenStable),
	"LogoutResponse":                     goldenOf[LogoutResponse]("LogoutResponse", goldenStable),

	"NewSessionRequest_mcp_servers":         goldenOf[NewSessionRequest]("NewSessionRequest", goldenStable),
	"NewSessionRequest_minimal":             goldenOf[NewSessionRequest]("NewSessionRequest", goldenStable),
	"NewSessionResponse":                    goldenOf[NewSessionResponse]("NewSessionResponse", goldenStable),
	"LoadSessionRequest":                    goldenOf[LoadSessionRequest]("LoadSessionRequest", goldenStable),
	"LoadSessionResponse":                   goldenOf[LoadSessionResponse]("LoadSessionResponse", goldenStable),
	"ResumeSessionRequest":                  goldenOf[ResumeSessionRequest]("ResumeSessionRequest", goldenStable),
	"ResumeSessionResponse":                 goldenOf[ResumeSessionResponse]("ResumeSessionResponse", goldenStable),
	"ForkSessionRequest":                    goldenOf[ForkSessionRequest]("ForkSessionRequest", goldenUnstable),
	"ForkSessionResponse":                   goldenOf[ForkSessionResponse]("ForkSessionResponse", goldenUnstable),
	"CloseSessionRequest":                   goldenOf[CloseSessionRequest]("CloseSessionRequest", goldenStable),
	"CloseSessionResponse":                  goldenOf[CloseSessionResponse]("CloseSessionResponse", goldenStable),
	"ListSessionsRequest":                   goldenOf[ListSessionsRequest]("ListSessionsRequest", goldenStable),
	"ListSessionsRequest_empty":             goldenOf[ListSessionsRequest]("ListSessionsRequest", goldenStable),
	"ListSessionsResponse":                  goldenOf[ListSessionsResponse]("ListSessionsResponse", goldenStable),
	"ListSessionsResponse_empty":            goldenOf[ListSessionsResponse]("ListSessionsResponse", goldenStable),
	"DeleteSessionRequest":                  goldenOf[DeleteSessionRequest]("DeleteSessionRequest", goldenStable),
	"DeleteSessionResponse":                 goldenOf[DeleteSessionResponse]("DeleteSessionResponse", goldenStable),
	"SetSessionModeRequest":                 goldenOf[SetSessionModeRequest]("SetSessionModeRequest", goldenStable),
	"SetSessionModeResponse":                goldenOf[SetSessionModeResponse]("SetSessionModeResponse", goldenStable),
	"SetSessionConfigOptionRequest":         goldenOf[SetSessionConfigOptionRequest]("SetSessionConfigOptionRequest", goldenStable),
	"SetSessionConfigOptionRequest_boolean": goldenOf[SetSessionConfigOptionRequest]("SetSessionConfigOptionRequest", goldenStable),
	"SetSessionConfigOptionResponse":        goldenOf[SetSessionConfigOptionResponse]("SetSessionConfigOptionResponse", goldenStable),

	"PromptRequest_all_blocks":            goldenOf[PromptRequest]("PromptRequest", goldenStable),
	"PromptResponse":                      goldenOf[PromptResponse]("PromptResponse", goldenStable),
	"PromptResponse_usage":                goldenOf[PromptResponse]("PromptResponse", goldenUnstable),
	"CancelNotification":                  goldenOf[CancelNotification]("CancelNotification", goldenStable),
	"CancelRequestNotification":           goldenOf[CancelRequestNotification]("CancelRequestNotification", goldenStable),
	"CancelRequestNotification_string_id": goldenOf[CancelRequestNotification]("CancelRequestNotification", goldenStable),

	"SessionNotification_agent_message_chunk":         goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_agent_thought_chunk":         goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_user_message_chunk_resource": goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_tool_call":                   goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_tool_call_minimal":           goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_tool_call_update_diff":       goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_tool_call_update_terminal":   goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_tool_call_update_clear":      goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_plan":                        goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_plan_empty":                  goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_available_commands_update":   goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_current_mode_update":         goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_config_option_update":        goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_session_info_update":         goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_session_info_update_clear":   goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_usage_update":                goldenOf[SessionNotification]("SessionNotification", goldenStable),
	"SessionNotification_notice":                      goldenOf[SessionNotification]("SessionNotification", goldenSDK),
	"SessionNotification_compaction_update":           goldenOf[SessionNotification]("SessionNotification", goldenSDK),
	"SessionNotification_compaction_update_clear":     goldenOf[SessionNotification]("SessionNotification", goldenSDK),
	"SessionNotification_compaction_summary_chunk":    goldenOf[SessionNotification]("SessionNotification", goldenSDK),
	"SessionNotification_tool_call_name":              goldenOf[SessionNotification]("SessionNotification", goldenSDK),

	// acp-agent's opt-in extension updates (docs/extensions.md).
	"SessionNotification_execution_state_update_running":  goldenOf[SessionNotification]("SessionNotification", goldenExtension),
	"SessionNotification_execution_state_update_retrying": goldenOf[SessionNotification]("SessionNotification", goldenExtension),
	"SessionNotification_execution_state_update_failed":   goldenOf[SessionNotification]("SessionNotification", goldenExtension),
	"SessionNotification_retry_update":                    goldenOf[SessionNotification]("SessionNotification", goldenExtension),
	"SessionNotification_retry_update_no_reason":          goldenOf[SessionNotification]("SessionNotification", goldenExtension),

	"RequestPermissionRequest":            goldenOf[RequestPermissionRequest]("RequestPermissionRequest", goldenStable),
	"RequestPermissionResponse_selected":  goldenOf[RequestPermissionResponse]("RequestPermissionResponse", goldenStable),
	"RequestPermissionResponse_cancelled": goldenOf[RequestPermissionResponse]("RequestPermissionResponse", goldenStable),

	"ReadTextFileRequest":                goldenOf[ReadTextFileRequest]("ReadTextFileRequest", goldenStable),
	"ReadTextFileResponse":               goldenOf[ReadTextFileResponse]("ReadTextFileResponse", goldenStable),
	"WriteTextFileRequest":               goldenOf[WriteTextFileRequest]("WriteTextFileRequest", goldenStable),
	"WriteTextFileResponse":              goldenOf[WriteTextFileResponse]("WriteTextFileResponse", goldenStable),
	"CreateTerminalRequest":              goldenOf[CreateTerminalRequest]("CreateTerminalRequest", goldenStable),
	"CreateTerminalRequest_minimal":      goldenOf[CreateTerminalRequest]("CreateTerminalRequest", goldenStable),
	"CreateTerminalResponse":             goldenOf[CreateTerminalResponse]("CreateTerminalResponse", goldenStable),
	"TerminalOutputRequest":              goldenOf[TerminalOutputRequest]("TerminalOutputRequest", goldenStable),
	"TerminalOutputResponse":             goldenOf[TerminalOutputResponse]("TerminalOutputResponse", goldenStable),
	"TerminalOutputResponse_running":     goldenOf[TerminalOutputResponse]("TerminalOutputResponse", goldenStable),
	"WaitForTerminalExitRequest":         goldenOf[WaitForTerminalExitRequest]("WaitForTerminalExitRequest", goldenStable),
	"WaitForTerminalExitResponse":        goldenOf[WaitForTerminalExitResponse]("WaitForTerminalExitResponse", goldenStable),
	"WaitForTerminalExitResponse_signal": goldenOf[WaitForTerminalExitResponse]("WaitForTerminalExitResponse", goldenStable),
	"KillTerminalRequest":                goldenOf[KillTerminalRequest]("KillTerminalRequest", goldenStable),
	"KillTerminalResponse":               goldenOf[KillTerminalResponse]("KillTerminalResponse", goldenStable),
	"ReleaseTerminalRequest":             goldenOf[ReleaseTerminalRequest]("ReleaseTerminalRequest", goldenStable),
	"ReleaseTerminalResponse":            goldenOf[ReleaseTerminalResponse]("ReleaseTerminalResponse", goldenStable),

	"CreateElicitationRequest_form":     goldenOf[CreateElicitationRequest]("CreateElicitationRequest", goldenStable),
	"CreateElicitationRequest_url":      goldenOf[CreateElicitationRequest]("CreateElicitationRequest", goldenStable),
	"CreateElicitationResponse_accept":  goldenOf[CreateElicitationResponse]("CreateElicitationResponse", goldenStable),
	"CreateElicitationResponse_decline": goldenOf[CreateElicitationResponse]("CreateElicitationResponse", goldenStable),
	"CreateElicitationResponse_cancel":  goldenOf[CreateElicitationResponse]("CreateElicitationResponse", goldenStable),
	"CompleteElicitationNotification":   goldenOf[CompleteElicitationNotification]("CompleteElicitationNotification", goldenStable),

	// SDK 2.4.0 unstable: plan operations, messages between sessions,
	// systemPrompt, auth/status, providers/*, MCP over ACP.
	"SessionNotification_plan_update_items":     goldenOf[SessionNotification]("SessionNotification", goldenSDKUnstable),
	"SessionNotification_plan_update_markdown":  goldenOf[SessionNotification]("SessionNotification", goldenSDKUnstable),
	"SessionNotification_plan_update_file":      goldenOf[SessionNotification]("SessionNotification", goldenSDKUnstable),
	"SessionNotification_plan_removed":          goldenOf[SessionNotification]("SessionNotification", goldenSDKUnstable),
	"SessionNotification_session_message":       goldenOf[SessionNotification]("SessionNotification", goldenSDKUnstable),
	"SessionNotification_session_message_chunk": goldenOf[SessionNotification]("SessionNotification", goldenSDKUnstable),
	"NewSessionRequest_system_prompt":           goldenOf[NewSessionRequest]("NewSessionRequest", goldenSDKUnstable),
	"InitializeResponse_sdk_unstable":           goldenOf[InitializeResponse]("InitializeResponse", goldenSDKUnstable),
	"AuthStatusResponse":                        goldenOf[AuthStatusResponse]("AuthStatusResponse", goldenSDKUnstable),
	"ListProvidersResponse":                     goldenOf[ListProvidersResponse]("ListProvidersResponse", goldenSDKUnstable),
	"SetProviderRequest":                        goldenOf[SetProviderRequest]("SetProviderRequest", goldenSDKUnstable),
	"DisableProviderRequest":                    goldenOf[DisableProviderRequest]("DisableProviderRequest", goldenSDKUnstable),
	"MessageMcpRequest":                         goldenOf[MessageMcpRequest]("MessageMcpRequest", goldenSDKUnstable),
	"MessageMcpNotification":                    goldenOf[MessageMcpNotification]("MessageMcpNotification", goldenSDKUnstable),
	"MessageMcpResponse_error":                  goldenOf[MessageMcpResponse]("MessageMcpResponse", goldenSDKUnstable),
}

func goldenChecker(t *testing.T) *schemacheck.Checker {
	t.Helper()
	c, err := schemacheck.Load()
	require.NoError(t, err)
	return c
}

func goldenValidate(c *schemacheck.Checker, tc goldenCase, data []byte) error {
	switch tc.schema {
	case goldenUnstable:
		return c.ValidateUnstable(tc.def, data)
	case goldenSDK:
		return c.ValidateSDK(tc.def, data)
	case goldenExtension:
		return c.ValidateExtension(tc.def, data)
	case goldenSDKUnstable:
		return c.ValidateSDKUnstable(tc.def, data)
	}
	return c.Validate(tc.def, data)
}

// TestGoldenRoundTrip decodes every fixture into its Go type, re-encodes it
// and compares, and validates the fixture against its schema definition.
func TestGoldenRoundTrip(t *testing.T) {
	checker := goldenChecker(t)
	names := make([]string, 0, len(goldenTable))
	for name := range goldenTable {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := goldenTable[name]
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(goldenDir, name+".json")
			want, err := os.ReadFile(path)
			require.NoError(t, err)

			v := tc.newValue()
			require.NoError(t, json.Unmarshal(want, v), "decode")
			got, err := json.Marshal(v)
			require.NoError(t, err, "encode")

			if *goldenUpdate {
				indented, err := json.MarshalIndent(v, "", "  ")
				require.NoError(t, err)
				want = append(indented, '\n')
				require.NoError(t, os.WriteFile(path, want, 0o644))
			} else {
				assert.JSONEq(t, string(want), string(got))
			}
			assert.NoError(t, goldenValidate(checker, tc, want), "fixture vs schema")
			assert.NoError(t, goldenValidate(checker, tc, got), "re-encoded vs schema")
		})
	}
}

// TestGoldenTableCoversFixtures checks there is no fixture without a table
// entry and no table entry without a fixture.
func TestGoldenTableCoversFixtures(t *testing.T) {
	entries, err := os.ReadDir(goldenDir)
	require.NoError(t, err)
	files := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".json")
		files[name] = true
		_, ok := goldenTable[name]
		assert.True(t, ok, "orphan fixture %s.json: add it to goldenTable", name)
	}
	for name := range goldenTable {
		assert.True(t, files[name], "goldenTable entry %q has no file %s.json", name, name)
	}
}

// TestGoldenFileNames checks that each fixture is named after its Go type
// and that each table entry names a schema definition that exists.
func TestGoldenFileNames(t *testing.T) {
	checker := goldenChecker(t)
	for name, tc := range goldenTable {
		typeName := strings.SplitN(name, "_", 2)[0]
		assert.Equal(t, "*acp."+typeName, fmt.Sprintf("%T", tc.newValue()), name)
		schema := map[goldenSchema]string{goldenStable: "stable", goldenUnstable: "unstable", goldenSDK: "sdk", goldenExtension: "extension", goldenSDKUnstable: "sdk-unstable"}[tc.schema]
		assert.True(t, checker.HasDef(schema, tc.def), "%s: %s schema has no $defs/%s", name, schema, tc.def)
	}
}
