package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// The stream caps come from the defaults, the config file, then the
// environment and flags, nearest first; nonsense is refused.
func TestStreamLimitSettings(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		env     map[string]string
		args    []string
		want    llm.Limits
		wantErr string
	}{
		{name: "defaults", want: llm.Limits{MaxToolArgumentBytes: llm.DefaultMaxToolArgumentBytes, MaxTextBytes: llm.DefaultMaxTextBytes}},
		{name: "config file", config: `{"maxToolArgumentBytes": 1000, "maxResponseTextBytes": 2000}`,
			want: llm.Limits{MaxToolArgumentBytes: 1000, MaxTextBytes: 2000}},
		{name: "environment over file", config: `{"maxToolArgumentBytes": 1000}`,
			env:  map[string]string{"ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES": "3000", "ACP_AGENT_MAX_RESPONSE_TEXT_BYTES": "4000"},
			want: llm.Limits{MaxToolArgumentBytes: 3000, MaxTextBytes: 4000}},
		{name: "flag over environment", env: map[string]string{"ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES": "3000"},
			args: []string{"--max-tool-argument-bytes", "5000", "--max-response-text-bytes", "6000"},
			want: llm.Limits{MaxToolArgumentBytes: 5000, MaxTextBytes: 6000}},
		{name: "zero in file", config: `{"maxResponseTextBytes": 0}`, wantErr: `"maxResponseTextBytes" must be a positive number of bytes`},
		{name: "negative flag", args: []string{"--max-tool-argument-bytes", "-1"}, wantErr: "--max-tool-argument-bytes (or ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES): must be a positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.config+" "), 0o600))
			if tt.config == "" {
				require.NoError(t, os.WriteFile(path, []byte("{}"), 0o600))
			}
			getenv := func(k string) string { return tt.env[k] }
			st, err := parseSettings("acp-agent", append([]string{"--config", path}, tt.args...), &bytes.Buffer{}, &bytes.Buffer{}, getenv, nil)
			if err == nil && st.configErr != nil {
				err = st.configErr // a file error does not stop parsing
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, st.streamLimits)
		})
	}
}
