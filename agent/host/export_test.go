package host

// WithSaveHook is c with hook run whenever a session's first message
// starts being saved with its file, beside the model call that answers
// it: a test holds the save there, as a slow disk would, or breaks it.
func WithSaveHook(c Config, hook func()) Config {
	c.saveHook = hook
	return c
}
