package acp

// ACP v1 method names (schema/v1/meta.json, plus session/fork from
// meta.unstable.json).
const (
	// Agent methods (client → agent).
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionFork            = "session/fork" // unstable
	MethodSessionClose           = "session/close"
	MethodSessionList            = "session/list"
	MethodSessionDelete          = "session/delete"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel"    // notification
	MethodSessionSetTitle        = "session/set_title" // unstable
	MethodSessionStatus          = "session/status"    // unstable
	MethodSessionArchive         = "session/archive"   // unstable
	MethodSessionUnarchive       = "session/unarchive" // unstable
	// MethodSessionSteering is the steering extension claude-agent-acp and
	// codex-acp answer: a message for the turn in flight.
	MethodSessionSteering = "_session/steering"

	// Client methods (agent → client).
	MethodSessionUpdate            = "session/update" // notification
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodTerminalRelease          = "terminal/release"
	MethodElicitationCreate        = "elicitation/create"
	MethodElicitationComplete      = "elicitation/complete" // notification

	// Protocol methods (either direction).
	MethodCancelRequest = "$/cancel_request" // notification
)
