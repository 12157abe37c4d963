package policy

import (
	"errors"
	"strings"
)

// ErrEnvDenied is what every CheckEnv refusal unwraps to.
var ErrEnvDenied = errors.New("environment variable denied")

// EnvDeniedError is the error CheckEnv returns.
type EnvDeniedError struct {
	Name string
}

func (e *EnvDeniedError) Error() string { return "Environment variable not allowed: " + e.Name }

// Unwrap returns ErrEnvDenied.
func (e *EnvDeniedError) Unwrap() error { return ErrEnvDenied }

// deniedEnv are exact names that make a program load or run code chosen by
// whoever sets them (reliability.md 2.2), or redirect where a program
// finds its config or binaries.
var deniedEnv = setOf(
	// Shells: startup files, hooks, parsing.
	"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "IFS",
	"SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "FPATH", "ZDOTDIR",
	"INPUTRC", "HISTFILE", "SHELL", "TMOUT", "EXECIGNORE",
	// Program lookup and config homes (git, ssh, npm, … read config from
	// there, and config can name programs to run).
	"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS",
	// Programs other programs start.
	"PAGER", "MANPAGER", "SYSTEMD_PAGER", "LESSOPEN", "LESSCLOSE", "LESSKEY",
	"LESSKEYIN", "EDITOR", "VISUAL", "BROWSER", "SUDO_ASKPASS", "SSH_ASKPASS",
	"SSH_AUTH_SOCK", "TERMINFO", "TERMINFO_DIRS",
	// glibc and OpenSSL loaders.
	"GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF",
	"GLIBC_TUNABLES", "MALLOC_CHECK_", "OPENSSL_CONF", "OPENSSL_ENGINES",
	"OPENSSL_MODULES", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
	// Language runtimes.
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"JAVA_HOME", "MAVEN_OPTS", "GRADLE_OPTS", "GROOVY_HOME",
	"PHPRC", "PHP_INI_SCAN_DIR", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON",
	"R_ENVIRON_USER", "R_LIBS", "R_LIBS_USER", "GEM_HOME", "GEM_PATH",
	"BUNDLE_GEMFILE", "DOTNET_STARTUP_HOOKS", "CORECLR_PROFILER",
	"CORECLR_PROFILER_PATH", "CORECLR_ENABLE_PROFILING", "ERL_FLAGS",
	"ERL_AFLAGS", "ERL_ZFLAGS", "ELIXIR_ERL_OPTIONS", "JULIA_LOAD_PATH",
	"JULIA_DEPOT_PATH", "TCLLIBPATH",
	// Go toolchain: GOFLAGS=-toolexec=… and a swapped GOROOT run anything.
	"GOFLAGS", "GOENV", "GOROOT", "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB",
	"GONOSUMCHECK", "GOINSECURE", "GOPRIVATE", "GONOPROXY", "GOSUMDB", "GOPATH",
	"GOBIN", "GOEXPERIMENT", "GODEBUG",
	// Build tools that name compilers and shells.
	"CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "NM", "RANLIB", "STRIP",
	"OBJCOPY", "MAKEFLAGS", "MAKEFILES", "MFLAGS", "GNUMAKEFLAGS",
	"RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS",
	"RUSTDOC", "RUSTDOCFLAGS", "PKG_CONFIG", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH",
	"DOCKER_HOST", "KUBECONFIG",
)

// deniedEnvPrefixes are families denied as a whole: the loader (LD_*,
// DYLD_*), every GIT_* (hooks, ssh command, external diff, config,
// editor), bash function imports (BASH_FUNC_*), and the option variables
// of interpreters and package managers.
var deniedEnvPrefixes = []string{
	"LD_", "DYLD_", "GIT_", "BASH_", "PYTHON", "PERL", "RUBY", "NODE_",
	"NPM_CONFIG_", "npm_config_", "YARN_", "PNPM_", "BUN_", "DENO_",
	"CARGO_", "RUSTUP_", "LUA_", "CGO_", "PIP_", "UV_", "POETRY_", "CONDA",
	"VIRTUAL_ENV", "MALLOC_", "LIBC_", "GCONV_", "LESS", "SSH_", "GPG",
	"GNUPG", "DOCKER_", "KUBE", "HELM_", "TF_", "JAVA", "JDK_", "SBT_",
	"DOTNET_", "CORECLR_", "COMPlus_", "NUGET_", "CLASSPATH", "ANDROID_",
	"EMACS", "VIM", "MYVIMRC", "GVIMINIT", "EXINIT", "XONSH", "ZSH", "KSH_",
	"FISH_", "PROMPT_", "HIST", "SUDO_", "PAGER", "TEXINPUTS",
}

// CheckEnv refuses any name that is not a plain identifier
// ([A-Za-z_][A-Za-z0-9_]*, which excludes '=', NUL and bash's
// BASH_FUNC_x%% function imports) or that is on the deny list (exact
// names and prefixes above; compared case-sensitively where the
// environment is, case-insensitively on Windows). It returns a
// *EnvDeniedError for the first refused name.
//
// The list is a deny list, so it cannot be complete: a program may read a
// variable no list knows. It covers the well-known injection routes of
// reliability.md 2.2 and more; callers wanting certainty should pass no
// extra environment at all.
func CheckEnv(names []string) error {
	for _, n := range names {
		if envNameDenied(n) {
			return &EnvDeniedError{Name: n}
		}
	}
	return nil
}

// allowedEnvExceptions are harmless names inside a denied prefix family.
var allowedEnvExceptions = setOf("NODE_ENV")

func envNameDenied(n string) bool {
	if !isIdentifier(n) {
		return true
	}
	if allowedEnvExceptions.has(n) {
		return false
	}
	if deniedEnv.has(n) || deniedWindowsEnv.has(envNameKey(n)) {
		return true
	}
	for _, p := range deniedEnvPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	if k := envNameKey(n); k != n {
		// Windows: names are case-insensitive, so "Path" is PATH and
		// "git_dir" is GIT_DIR.
		return envNameDenied(k) && !allowedEnvExceptions.has(k)
	}
	return false
}

// deniedWindowsEnv are names that choose what Windows programs and
// shells run (compared upper-cased; harmless to deny elsewhere).
var deniedWindowsEnv = setOf(
	"PATHEXT", "COMSPEC", "PSMODULEPATH", "PSMODULEANALYSISCACHEPATH",
	"SYSTEMROOT", "WINDIR", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
	"PROGRAMFILES", "PROGRAMDATA", "NODEFAULTCURRENTDIRECTORYINEXEPATH",
)

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
