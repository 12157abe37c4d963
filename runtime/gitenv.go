package runtime

import (
	"strconv"
	"strings"
)

// gitSafety is the git configuration every command the agent starts gets
// through git's GIT_CONFIG_COUNT/KEY/VALUE environment (which outranks
// every config file, including the repository's own):
//
//   - safe.bareRepository=explicit: git never uses a bare repository it
//     discovers by walking up from the working directory. A model (or a
//     hostile repository) can write HEAD, config, objects/ and refs/ as
//     plain files; without this, git status in that directory reads that
//     config and runs what core.fsmonitor names.
//   - core.fsmonitor=false: the repository's own config cannot name a
//     program that git runs on status, diff or add.
//
// core.hooksPath is deliberately not overridden: users rely on their
// repositories' hooks in commits they ask the agent to make, and the
// agent never writes .git (policy.DeniedName).
var gitSafety = [][2]string{
	{"safe.bareRepository", "explicit"},
	{"core.fsmonitor", "false"},
}

// withGitSafety returns env with gitSafety appended after any
// GIT_CONFIG_COUNT entries env already has, so ours are read last and win.
func withGitSafety(env []string) []string {
	n := 0
	if v := envValue(env, "GIT_CONFIG_COUNT"); v != "" {
		if c, err := strconv.Atoi(v); err == nil && c > 0 && c < 1000 {
			n = c
		}
	}
	out := make([]string, 0, len(env)+1+2*len(gitSafety))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") {
			out = append(out, kv)
		}
	}
	return append(out, GitSafetyEnv(n)...)
}

// GitSafetyEnv returns the GIT_CONFIG_* variables ("NAME=value") that add
// gitSafety after the first n inherited entries, GIT_CONFIG_COUNT last.
// Commands run in the editor's terminal get them with n = 0.
func GitSafetyEnv(n int) []string {
	var out []string
	for i, kv := range gitSafety {
		idx := strconv.Itoa(n + i)
		out = append(out, "GIT_CONFIG_KEY_"+idx+"="+kv[0], "GIT_CONFIG_VALUE_"+idx+"="+kv[1])
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(gitSafety)))
}
