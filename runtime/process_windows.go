package runtime

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

func prepareGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true,
		CreationFlags: windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP}
}

func killGroup(int) {}

func exitedCleanly(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

func notDumpable() {}
