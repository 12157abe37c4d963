package convention

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// portableSyscall are the syscall names any package may use: constants
// and types that mean the same on every OS.
var portableSyscall = map[string]bool{"SIGTERM": true, "SIGINT": true, "RawConn": true, "ENOTDIR": true, "ENAMETOOLONG": true}

// The OS-file convention, checked on every non-test Go file:
//   - a file named *_linux.go, *_darwin.go or *_windows.go is that OS's
//     (Go applies the suffix); *_unix.go has exactly the constraint unix;
//   - no *_other.go: a fallback says what it is (*_fallback.go) and
//     carries its constraint;
//   - only runtime and persistence (and internal/winetest, the Wine test
//     build's support) use syscall's OS-specific parts or golang.org/x/sys,
//     and only in files of one OS.
func TestOSFilesFollowTheConvention(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "dist" || name == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		checked++
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly|parser.ParseComments)
		require.NoError(t, err, rel)
		expr := buildConstraint(f)
		base := strings.TrimSuffix(name, ".go")
		assert.False(t, strings.HasSuffix(base, "_other"), "%s: name the fallback for what it is (*_fallback.go)", rel)
		if strings.HasSuffix(base, "_unix") {
			assert.Equal(t, "unix", expr, "%s: a _unix.go file has exactly //go:build unix", rel)
		}
		osFile := strings.HasSuffix(base, "_linux") || strings.HasSuffix(base, "_darwin") || strings.HasSuffix(base, "_windows") || strings.HasSuffix(base, "_unix") ||
			osSpecific(expr)
		inOSPackage := strings.HasPrefix(rel, "runtime/") || strings.HasPrefix(rel, "persistence/") || strings.HasPrefix(rel, "internal/winetest/")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "golang.org/x/sys") {
				assert.True(t, inOSPackage && osFile, "%s imports %s: only runtime's and persistence's OS files may", rel, p)
			}
			if p == "syscall" && !(inOSPackage && osFile) {
				full, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
				require.NoError(t, err)
				ast.Inspect(full, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "syscall" {
							assert.True(t, portableSyscall[sel.Sel.Name], "%s uses syscall.%s: OS-specific calls belong in runtime's or persistence's OS files", rel, sel.Sel.Name)
						}
					}
					return true
				})
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 100, "the walk found the tree")
}

// osSpecific reports whether the constraint leaves out one of the OSes
// we ship (seccomp_amd64.go's "linux && amd64").
func osSpecific(expr string) bool {
	if expr == "" {
		return false
	}
	x, err := constraint.Parse("//go:build " + expr)
	if err != nil {
		return false
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			ok := x.Eval(func(tag string) bool {
				return tag == goos || tag == arch || tag == "unix" && goos != "windows"
			})
			if !ok {
				return true
			}
		}
	}
	return false
}

// buildConstraint is the file's //go:build expression, or "".
func buildConstraint(f *ast.File) string {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				if err == nil {
					return expr.String()
				}
			}
		}
	}
	return ""
}
