package sse_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm/sse"
)

func Example() {
	body := strings.NewReader(": OPENROUTER PROCESSING\n\n" +
		"data: {\"a\":1}\r\n\r\n" +
		"event: message_stop\ndata: line 1\ndata: line 2\n\n")
	r := sse.NewReader(body, 0)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q %q\n", ev.Name, ev.Data)
	}
	// Output:
	// "" "{\"a\":1}"
	// "message_stop" "line 1\nline 2"
}
