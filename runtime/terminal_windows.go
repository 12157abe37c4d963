package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// killedExitCode is the exit code of a process the terminal killed
// (TerminateJobObject): what Windows reports for a console program ended
// by Ctrl+C, so tools read it as "interrupted".
const killedExitCode = 0xC000013A

// procSys is the process's Job Object: the process and everything it
// starts belong to it (children inherit the job), and closing its last
// handle kills them all (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so a
// cancelled command takes its whole tree with it even if the agent dies.
type procSys struct {
	mu  sync.Mutex
	job windows.Handle // 0 once closed
}

// sysProcAttr starts the child suspended (it runs only once it is in its
// job, so nothing it starts can escape), without a console window, in a
// process group of its own.
func sysProcAttr(int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		HideWindow:    true,
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP,
	}
}

// setCmdLine gives the program exactly line as its command line.
func setCmdLine(a *syscall.SysProcAttr, line string) {
	if line != "" {
		a.CmdLine = line
	}
}

// attach puts the suspended process in a new kill-on-close job and lets
// it run.
func (p *Process) attach(proc *os.Process) error {
	job, err := newKillJob()
	if err != nil {
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(proc.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("open process %d: %w", proc.Pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("assign process %d to its job: %w", proc.Pid, err)
	}
	p.sys.job = job
	if err := resumeProcess(uint32(proc.Pid)); err != nil {
		return err // the caller kills it; closing the job does too
	}
	return nil
}

// newKillJob creates a job whose processes all die when its last handle
// closes.
func newKillJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("set kill-on-close on the job object: %w", err)
	}
	return job, nil
}

// resumeProcess resumes every thread of the suspended process pid (a
// process started with CREATE_SUSPENDED has one).
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("resume process %d: %w", pid, err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("resume process %d: open thread %d: %w", pid, te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume process %d: thread %d: %w", pid, te.ThreadID, err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("resume process %d: no thread found", pid)
	}
	return nil
}

// terminate ends the whole job at once: console programs without a
// console (CREATE_NO_WINDOW) get no Ctrl+Break to end gracefully.
func (p *Process) terminate() error { return p.forceKill() }

// forceKill terminates every process of the job. A job already closed,
// or with nothing left in it, is not an error.
func (p *Process) forceKill() error {
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	if p.sys.job == 0 {
		return nil
	}
	if err := windows.TerminateJobObject(p.sys.job, killedExitCode); err != nil {
		return fmt.Errorf("terminate the job of process %d: %w", p.pid, err)
	}
	return nil
}

// detach closes the job, which kills anything still in it.
func (p *Process) detach() error {
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	if p.sys.job == 0 {
		return nil
	}
	err := windows.CloseHandle(p.sys.job)
	p.sys.job = 0
	return err
}

// processResult is the exit code; Windows has no signals.
func processResult(ps *os.ProcessState) waitResult {
	if ps == nil || !ps.Exited() {
		return waitResult{}
	}
	return waitResult{known: true, code: int(uint32(ps.ExitCode()))}
}

// startConfined fails: there is no sandbox on Windows (sandbox.Probe says
// so, and the agent never configures one here).
func (t *LocalTerminal) startConfined(*Process, *exec.Cmd, bool, int) (func() waitResult, error) {
	return nil, errors.New("commands cannot be confined on Windows")
}

// platformBaseEnv is the environment Windows programs need to start at
// all (SystemRoot, PATHEXT, the profile directories, TEMP, ...), without
// PATH; cmd.exe is asked not to run programs from the current directory
// first (NoDefaultCurrentDirectoryInExePath).
func platformBaseEnv() []string {
	keep := []string{
		"SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "TEMP", "TMP",
		"USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "ProgramData",
		"ProgramFiles", "ProgramFiles(x86)", "ProgramW6432", "CommonProgramFiles",
		"CommonProgramFiles(x86)", "CommonProgramW6432", "PUBLIC", "USERNAME", "USERDOMAIN",
		"COMPUTERNAME", "OS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER",
		"NUMBER_OF_PROCESSORS", "PSModulePath",
	}
	env := []string{"NoDefaultCurrentDirectoryInExePath=1"}
	for _, k := range keep {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if v, ok := os.LookupEnv("USERPROFILE"); ok {
		env = append(env, "HOME="+v)
	}
	return env
}
