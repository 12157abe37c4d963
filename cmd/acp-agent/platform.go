package main

import (
	goruntime "runtime"
)

// onWindows: paths, defaults and the sandbox differ there.
const onWindows = goruntime.GOOS == "windows"

// unconfinedByDesign: on Windows there is no sandbox yet, so "auto"
// means commands run unconfined, and say so, rather than that every
// command asks (which is what "auto" means where a sandbox could exist
// but the kernel lacks it).
const unconfinedByDesign = onWindows

// unconfinedNote is what a session says at its first local command when
// commands run without a sandbox by design ("" elsewhere, and when the
// user turned the sandbox off).
func unconfinedNote(f sandboxFlags, file *sandboxFile) string {
	if !unconfinedByDesign {
		return ""
	}
	mode := "auto"
	if file != nil && file.Mode != "" {
		mode = file.Mode
	}
	if *f.mode != "" {
		mode = *f.mode
	}
	if mode == "off" {
		return ""
	}
	return "commands run without a sandbox on Windows (there is none here yet). Each command asks for permission unless the session is in full-access mode, and \"Always allow\" covers exactly that command line in that folder."
}

// platformSandboxNote is what doctor says about the sandbox on Windows.
func platformSandboxNote() string {
	return "none on Windows yet: commands run unconfined, through PowerShell (or cmd.exe, config \"shell\") in a Job Object that ends with them; each asks unless the session is in full-access mode"
}
