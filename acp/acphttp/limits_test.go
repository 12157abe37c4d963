package acphttp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// TestStreamLimitHoldsUnderConcurrentOpens: event streams opened at the
// same instant never get past the limit of open streams; the others are
// refused with 503. Every admitted stream is held just after its
// admission until each request has been admitted or refused: checking
// the open count, then attaching the stream, let them all past it.
func TestStreamLimitHoldsUnderConcurrentOpens(t *testing.T) {
	const limit, tries = 4, 40
	var admitted, refused atomic.Int64
	release := make(chan struct{})
	var releaseOnce sync.Once
	settled := func() {
		if admitted.Load()+refused.Load() == tries {
			releaseOnce.Do(func() { close(release) })
		}
	}
	defer acphttp.SetStreamAdmitted(func() {
		admitted.Add(1)
		settled()
		<-release
	})()
	url := serveEchoV2(t, acphttp.Options{MaxStreams: limit}, nil)
	tr := &http.Transport{MaxIdleConnsPerHost: tries}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	params, err := json.Marshal(&acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "t", Version: "1"}})
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+string(params)+`}`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	conn := resp.Header.Get(acphttp.HeaderConnectionID)

	var ok atomic.Int64
	var mu sync.Mutex
	var open []io.Closer
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range tries {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer tok")
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set(acphttp.HeaderConnectionID, conn)
			req.Header.Set(acphttp.HeaderSessionID, fmt.Sprintf("s-%d", i))
			<-start
			resp, err := hc.Do(req)
			if err != nil {
				refused.Add(1) // counted as settled, and fails the sum below
				settled()
				return
			}
			switch resp.StatusCode {
			case http.StatusOK:
				ok.Add(1)
				mu.Lock()
				open = append(open, resp.Body) // held open until counted
				mu.Unlock()
				return
			case http.StatusServiceUnavailable:
				refused.Add(1)
				settled()
			}
			resp.Body.Close()
		})
	}
	close(start)
	wg.Wait()
	for _, b := range open {
		b.Close()
	}
	assert.LessOrEqual(t, ok.Load(), int64(limit), "streams open at once past the limit")
	assert.EqualValues(t, tries, ok.Load()+refused.Load())
}
