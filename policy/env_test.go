package policy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckEnvRefusesInjectionVariables(t *testing.T) {
	for _, name := range []string{
		"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
		"DYLD_LIBRARY_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "PATH",
		"IFS", "SHELLOPTS", "BASHOPTS", "CDPATH", "GIT_SSH_COMMAND",
		"GIT_EXTERNAL_DIFF", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0",
		"GIT_CONFIG_VALUE_0", "GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_EXEC_PATH",
		"GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS", "PAGER", "MANPAGER", "EDITOR",
		"VISUAL", "LESSOPEN", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH",
		"PYTHONSTARTUP", "PYTHONHOME", "PYTHONWARNINGS", "PERL5OPT", "PERL5LIB",
		"PERLLIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		"JDK_JAVA_OPTIONS", "CLASSPATH", "GOFLAGS", "GOTOOLCHAIN", "GOROOT",
		"CC", "CXX", "CGO_CFLAGS", "RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER",
		"npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL", "MAKEFLAGS",
		"HOME", "XDG_CONFIG_HOME", "ZDOTDIR", "GCONV_PATH", "GLIBC_TUNABLES",
		"OPENSSL_CONF", "SSH_AUTH_SOCK", "SSH_ASKPASS", "SUDO_ASKPASS",
		"BASH_FUNC_ls%%", "BASH_FUNC_ls", "LUA_INIT", "PHPRC",
		"DOTNET_STARTUP_HOOKS",
		// Malformed names.
		"", "A=B", "LD_PRELOAD=x", "A\x00B", "1ABC", "A-B", "A B", "Ä",
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckEnv([]string{"FOO", name})
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrEnvDenied))
			require.Equal(t, "Environment variable not allowed: "+name, err.Error())
			var ee *EnvDeniedError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, name, ee.Name)
		})
	}
}

func TestCheckEnvAllowsOrdinaryVariables(t *testing.T) {
	for _, name := range []string{
		"FOO", "CI", "DEBUG", "RUST_LOG", "RUST_BACKTRACE", "NO_COLOR",
		"TZ", "LANG", "LC_ALL", "TERM", "COLUMNS", "TMPDIR", "MY_APP_MODE",
		"ld_preload", "path", "_private", "GOMAXPROCS", "GOOS", "GOARCH",
		"CGOENABLED", "NODE_ENV", "VERBOSE",
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, CheckEnv([]string{name}))
		})
	}
	require.NoError(t, CheckEnv(nil))
}
