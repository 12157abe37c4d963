package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePatchRefusesWhatItCannotApply(t *testing.T) {
	for name, p := range map[string]string{
		"no envelope":   "*** Update File: a\n-x\n+y",
		"delete":        "*** Begin Patch\n*** Delete File: a\n*** End Patch",
		"empty":         "*** Begin Patch\n*** End Patch",
		"twice":         "*** Begin Patch\n*** Add File: a\n+x\n*** Add File: a\n+y\n*** End Patch",
		"bad add line":  "*** Begin Patch\n*** Add File: a\nx\n*** End Patch",
		"bad hunk line": "*** Begin Patch\n*** Update File: a\n?x\n*** End Patch",
	} {
		_, err := parsePatch(p)
		assert.Error(t, err, name)
	}
}

func TestApplyHunksInOrderAndUniquely(t *testing.T) {
	files, err := parsePatch("*** Begin Patch\n*** Update File: a\n@@ func b\n-\treturn 1\n+\treturn 2\n*** End Patch")
	require.NoError(t, err)
	out, _, err := applyHunks("func a\n\treturn 1\nfunc b\n\treturn 1\n", files[0].hunks, "a")
	require.NoError(t, err)
	assert.Equal(t, "func a\n\treturn 1\nfunc b\n\treturn 2\n", out, "the @@ line places the hunk")
	files, err = parsePatch("*** Begin Patch\n*** Update File: a\n-\treturn 1\n+\treturn 2\n*** End Patch")
	require.NoError(t, err)
	_, _, err = applyHunks("func a\n\treturn 1\nfunc b\n\treturn 1\n", files[0].hunks, "a")
	assert.ErrorContains(t, err, "occur 2 times")
}
