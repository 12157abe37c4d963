// Command startfloor answers one ACP initialize and links nothing of
// acp-agent but github.com/santhosh-tekuri/jsonschema/v5, whose package
// init compiles its meta-schemas before main: BenchmarkStartupToInitialize
// starts it to show what that dependency alone would cost a start. The
// acp-agent binary no longer links it (issue 31: it validates ACP
// messages in tests only, internal/convention checks that); this program
// keeps the figure that removal saved comparable across rounds.
package main

import (
	"bufio"
	"os"

	_ "github.com/santhosh-tekuri/jsonschema/v5"
)

func main() {
	if _, err := bufio.NewReader(os.Stdin).ReadBytes('\n'); err != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\n")
}
