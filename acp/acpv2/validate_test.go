package acpv2

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecodeRefusesWhatTheSchemaDoes: each bad params is refused with
// an error that names the member; good ones decode.
func TestDecodeRefusesWhatTheSchemaDoes(t *testing.T) {
	for _, tc := range []struct {
		name, def, params, wantErr string
		into                       any
	}{
		{"new session", "NewSessionRequest", `{"cwd":"/w","mcpServers":[{"type":"stdio","name":"a","command":"npx"},{"type":"http","name":"b","url":"http://x"}]}`, "", new(NewSessionRequest)},
		{"no cwd", "NewSessionRequest", `{}`, "cwd: required", new(NewSessionRequest)},
		{"null cwd", "NewSessionRequest", `{"cwd":null}`, "cwd: required", new(NewSessionRequest)},
		{"relative cwd", "NewSessionRequest", `{"cwd":"w"}`, "cwd: must be an absolute path", new(NewSessionRequest)},
		{"relative root", "NewSessionRequest", `{"cwd":"/w","additionalDirectories":["/a","b"]}`, "additionalDirectories[1]: must be an absolute path", new(NewSessionRequest)},
		{"duplicate server", "NewSessionRequest", `{"cwd":"/w","mcpServers":[{"type":"stdio","name":"a","command":"x"},{"type":"http","name":"a","url":"http://x"}]}`, `mcpServers[1].name: "a" is the name of an earlier server`, new(NewSessionRequest)},
		{"server without command", "NewSessionRequest", `{"cwd":"/w","mcpServers":[{"type":"stdio","name":"a"}]}`, "mcpServers[0].command: required", new(NewSessionRequest)},
		{"wrong type", "NewSessionRequest", `{"cwd":7}`, "cwd: expected string", new(NewSessionRequest)},
		{"not an object", "NewSessionRequest", `[1]`, "params: must be an object", new(NewSessionRequest)},
		{"empty prompt", "PromptRequest", `{"sessionId":"s","prompt":[]}`, "prompt: must not be empty", new(PromptRequest)},
		{"replay from start", "ResumeSessionRequest", `{"sessionId":"s","cwd":"/w","replayFrom":{"type":"start"}}`, "", new(ResumeSessionRequest)},
		{"unknown cursor", "ResumeSessionRequest", `{"sessionId":"s","cwd":"/w","replayFrom":{"type":"_last"}}`, `replayFrom: cursor type "_last" is not supported`, new(ResumeSessionRequest)},
		{"config id", "SetSessionConfigOptionRequest", `{"sessionId":"s","configId":"mode","type":"id","value":"plan"}`, "", new(SetSessionConfigOptionRequest)},
		{"config bool as id", "SetSessionConfigOptionRequest", `{"sessionId":"s","configId":"mode","type":"id","value":true}`, "value: must be a string", new(SetSessionConfigOptionRequest)},
		{"config custom type", "SetSessionConfigOptionRequest", `{"sessionId":"s","configId":"mode","type":"_range","value":3}`, `type: value type "_range" is not supported`, new(SetSessionConfigOptionRequest)},
		{"config no value", "SetSessionConfigOptionRequest", `{"sessionId":"s","configId":"mode","type":"boolean"}`, "value: required", new(SetSessionConfigOptionRequest)},
		{"logout without params", "LogoutAuthRequest", ``, "", new(LogoutAuthRequest)},
		{"empty system prompt", "NewSessionRequest", `{"cwd":"/w","systemPrompt":{"mode":"append","content":[]}}`, "systemPrompt.content: must not be empty", new(NewSessionRequest)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Decode(tc.def, []byte(tc.params), tc.into)
			if tc.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.wantErr)
			}
		})
	}
}
