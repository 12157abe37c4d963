package main

import (
	"flag"
	"fmt"

	"github.com/acp-agent/acp-agent/agent/llm"
	agentsettings "github.com/acp-agent/acp-agent/agent/settings"
)

// The caps of one streamed model response (llm.Limits): settings keys,
// config-file members, flags and environment variables.
var streamLimitKeys = []struct {
	key, flag, env, what string
	def                  int
}{
	{"maxToolArgumentBytes", "max-tool-argument-bytes", "ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES",
		"cap on the tool-call arguments of one model response, in bytes", llm.DefaultMaxToolArgumentBytes},
	{"maxResponseTextBytes", "max-response-text-bytes", "ACP_AGENT_MAX_RESPONSE_TEXT_BYTES",
		"cap on the text and reasoning of one model response, in bytes", llm.DefaultMaxTextBytes},
}

// streamLimitFlags holds the flags' values (0: not given).
type streamLimitFlags []*int

func addStreamLimitFlags(fs *flag.FlagSet, getenv func(string) string) streamLimitFlags {
	var out streamLimitFlags
	for _, k := range streamLimitKeys {
		out = append(out, fs.Int(k.flag, envInt(getenv, k.env, 0),
			fmt.Sprintf("%s; a longer response ends with an error (env %s; default %d)", k.what, k.env, k.def)))
	}
	return out
}

// apply puts the defaults, the config file's values and the flags' into
// their layers.
func (f streamLimitFlags) apply(defaults, fileLayer, flagLayer *agentsettings.Settings, file *fileConfig) error {
	fromFile := []*int{file.MaxToolArgumentBytes, file.MaxResponseTextBytes}
	for i, k := range streamLimitKeys {
		defaults.Set(k.key, k.def)
		if fromFile[i] != nil {
			fileLayer.Set(k.key, *fromFile[i])
		}
		switch v := *f[i]; {
		case v < 0:
			return fmt.Errorf("--%s (or %s): must be a positive number of bytes, got %d", k.flag, k.env, v)
		case v > 0:
			flagLayer.Set(k.key, v)
		}
	}
	return nil
}

// checkStreamLimits validates the config file's caps.
func (c *fileConfig) checkStreamLimits() error {
	for i, v := range []*int{c.MaxToolArgumentBytes, c.MaxResponseTextBytes} {
		if v != nil && *v <= 0 {
			return fmt.Errorf("%q must be a positive number of bytes, got %d", streamLimitKeys[i].key, *v)
		}
	}
	return nil
}

func streamLimits(l *agentsettings.Settings) llm.Limits {
	return llm.Limits{
		MaxToolArgumentBytes: l.Int("maxToolArgumentBytes", llm.DefaultMaxToolArgumentBytes),
		MaxTextBytes:         l.Int("maxResponseTextBytes", llm.DefaultMaxTextBytes),
	}
}
