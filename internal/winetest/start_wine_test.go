//go:build windows && winetest

package winetest

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/windows"
)

// Start tries again only after Wine's transient failure to start a
// process, at most five times; any other error ends it at once.
func TestStartTriesAgainOnlyAfterWinesInternalError(t *testing.T) {
	// As os.StartProcess returns it: fork/exec x.exe: Internal error.
	wrapped := &os.PathError{Op: "fork/exec", Path: `Z:\tmp\x.exe`, Err: windows.ERROR_INTERNAL_ERROR}
	other := errors.New("exit status 1")
	for _, tc := range []struct {
		name  string
		errs  []error // what each try returns; nil afterwards
		want  error
		tries int
	}{
		{"first try", nil, nil, 1},
		{"after two internal errors", []error{windows.ERROR_INTERNAL_ERROR, wrapped}, nil, 3},
		{"another error", []error{other}, other, 1},
		{"another error after an internal one", []error{windows.ERROR_INTERNAL_ERROR, other}, other, 2},
		{"five internal errors", []error{wrapped, wrapped, wrapped, wrapped, wrapped, wrapped}, wrapped, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries, logged := 0, 0
			err := Start(func(string, ...any) { logged++ }, func() error {
				tries++
				if tries <= len(tc.errs) {
					return tc.errs[tries-1]
				}
				return nil
			})
			assert.Equal(t, tc.want, err)
			assert.Equal(t, tc.tries, tries)
			assert.Equal(t, tc.tries-1, logged, "each new try is logged")
		})
	}
}
