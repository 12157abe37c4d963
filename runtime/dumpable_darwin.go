package runtime

// notDumpable does nothing: macOS has no prctl; its task ports are not
// readable by other processes without entitlements.
func notDumpable() {}
