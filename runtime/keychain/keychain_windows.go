package keychain

import (
	"errors"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// credential is CREDENTIALW (wincred.h).
type credential struct {
	Flags              uint32
	Type               uint32
	TargetName         *uint16
	Comment            *uint16
	LastWritten        windows.Filetime
	CredentialBlobSize uint32
	CredentialBlob     *byte
	Persist            uint32
	AttributeCount     uint32
	Attributes         uintptr
	TargetAlias        *uint16
	UserName           *uint16
}

const (
	credTypeGeneric         = 1
	credPersistLocalMachine = 2
	errorNotFound           = windows.Errno(1168) // ERROR_NOT_FOUND
)

var (
	advapi32   = windows.NewLazySystemDLL("advapi32.dll")
	credWrite  = advapi32.NewProc("CredWriteW")
	credRead   = advapi32.NewProc("CredReadW")
	credDelete = advapi32.NewProc("CredDeleteW")
	credFree   = advapi32.NewProc("CredFree")
)

// credManager is the Windows Credential Manager: generic credentials
// named "service:account", kept per user (persisted on this machine).
type credManager struct{}

func defaultStore() Store {
	if credWrite.Find() != nil || credRead.Find() != nil {
		return nil
	}
	return credManager{}
}

func (credManager) Name() string { return "the Windows Credential Manager" }

func target(service, account string) (*uint16, error) {
	return windows.UTF16PtrFromString(service + ":" + account)
}

func (credManager) Set(service, account, secret string) error {
	if err := validSecret(secret); err != nil {
		return err
	}
	name, err := target(service, account)
	if err != nil {
		return err
	}
	user, _ := windows.UTF16PtrFromString(account)
	blob := utf16.Encode([]rune(secret))
	c := credential{
		Type: credTypeGeneric, TargetName: name, UserName: user, Persist: credPersistLocalMachine,
		CredentialBlobSize: uint32(2 * len(blob)), CredentialBlob: (*byte)(unsafe.Pointer(&blob[0])),
	}
	if r, _, err := credWrite.Call(uintptr(unsafe.Pointer(&c)), 0); r == 0 {
		return err
	}
	return nil
}

func (credManager) Get(service, account string) (string, error) {
	name, err := target(service, account)
	if err != nil {
		return "", err
	}
	var c *credential
	if r, _, err := credRead.Call(uintptr(unsafe.Pointer(name)), credTypeGeneric, 0, uintptr(unsafe.Pointer(&c))); r == 0 {
		if errors.Is(err, errorNotFound) {
			return "", ErrNotFound
		}
		return "", err
	}
	defer credFree.Call(uintptr(unsafe.Pointer(c)))
	if c.CredentialBlobSize == 0 || c.CredentialBlob == nil {
		return "", nil
	}
	u := unsafe.Slice((*uint16)(unsafe.Pointer(c.CredentialBlob)), c.CredentialBlobSize/2)
	return string(utf16.Decode(u)), nil
}

func (credManager) Delete(service, account string) error {
	name, err := target(service, account)
	if err != nil {
		return err
	}
	if r, _, err := credDelete.Call(uintptr(unsafe.Pointer(name)), credTypeGeneric, 0); r == 0 && !errors.Is(err, errorNotFound) {
		return err
	}
	return nil
}
