package main

import (
	"fmt"
	"io"
	goruntime "runtime"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
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

// platformDoctor is what `acp-agent doctor` adds about this OS: how
// commands run and what confines them.
func platformDoctor(w io.Writer) {
	st := sandbox.Probe()
	switch goruntime.GOOS {
	case "windows":
		fmt.Fprintln(w, "platform: windows: no sandbox; commands run unconfined through PowerShell (or cmd.exe, config \"shell\") in a Job Object that ends with them")
		fmt.Fprintln(w, "commands are not confined here: each asks for permission unless the session is in full-access mode")
	case "darwin":
		if st.Available {
			fmt.Fprintln(w, "platform: darwin: commands are confined with Seatbelt (/usr/bin/sandbox-exec), the profile generated from the sandbox policy")
		} else {
			fmt.Fprintln(w, "platform: darwin: /usr/bin/sandbox-exec is missing; with --sandbox auto or on, every command asks for permission")
		}
	}
}
