package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// historyLengths are the histories BenchmarkSendHistory sends with.
var historyLengths = []int{10, 100, 1000, 5000, 20000}

// BenchmarkSendHistory measures a one-round send against the length of the
// agent's history (messages of 200 characters, user and assistant in turn),
// beside its floor: the very request body agent-server sent to the model,
// sent straight to the fake model by a client that encodes it (from the
// same messages), posts it and parses the streamed answer, with no engine.
// Each iteration sets the history (SetHistory, timed too), sends, and
// times the floor, for every length in turn, so that all see the same load.
// It reports per length n<N>-send-p50-ms, n<N>-floor-p50-ms,
// n<N>-sethistory-p50-ms and n<N>-request-bytes, and the per-message cost,
// the least-squares slope of the p50 over the history's length:
// send-µs/msg, floor-µs/msg and sethistory-µs/msg.
//
//	go test -run '^$' -bench SendHistory -benchtime 7x ./bench
func BenchmarkSendHistory(b *testing.B) {
	turn := fakemodel.Turn{TextChunks: []string{"a", "b", "c"}, Usage: &fakemodel.Usage{Input: 10, Output: 3}}
	var (
		mu   sync.Mutex
		last []byte // the body of the last request the model got
	)
	system := suite.Router.Add(b, func(_ int, r *fakemodel.Request) fakemodel.Turn {
		mu.Lock()
		last = r.Body
		mu.Unlock()
		return turn
	})
	a := benchAgents(b, 1, system, []string{})[0]
	histories := make([][]*agentv1.Message, len(historyLengths))
	for i, n := range historyLengths {
		histories[i] = e2e.History(n, 200)
	}
	send, floor, set := make([][]time.Duration, len(historyLengths)), make([][]time.Duration, len(historyLengths)), make([][]time.Duration, len(historyLengths))
	size := make([]int, len(historyLengths))
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		for i, h := range histories {
			start := time.Now()
			if err := a.SetHistory(ctx, h); err != nil {
				b.Fatal(err)
			}
			set[i] = append(set[i], time.Since(start))
			start = time.Now()
			if _, err := a.Send(ctx, "hi", client.Callbacks{}); err != nil {
				b.Fatal(err)
			}
			send[i] = append(send[i], time.Since(start))
			mu.Lock()
			body := last
			mu.Unlock()
			size[i] = len(body)
			floor[i] = append(floor[i], directSend(b, body))
		}
	}
	b.StopTimer()
	for i, n := range historyLengths {
		b.ReportMetric(p50ms(send[i]), fmt.Sprintf("n%d-send-p50-ms", n))
		b.ReportMetric(p50ms(floor[i]), fmt.Sprintf("n%d-floor-p50-ms", n))
		b.ReportMetric(p50ms(set[i]), fmt.Sprintf("n%d-sethistory-p50-ms", n))
		b.ReportMetric(float64(size[i]), fmt.Sprintf("n%d-request-bytes", n))
	}
	b.ReportMetric(slope(send)*1000, "send-µs/msg")
	b.ReportMetric(slope(floor)*1000, "floor-µs/msg")
	b.ReportMetric(slope(set)*1000, "sethistory-µs/msg")
}

// directSend is the floor under a send: it decodes body (an OpenAI chat
// request) into messages, times their encoding, the POST to the fake model
// and the parsing of every streamed chunk, and returns that time.
func directSend(b *testing.B, body []byte) time.Duration {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var req struct {
		Model    string    `json:"model"`
		Stream   bool      `json:"stream"`
		Messages []message `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		b.Fatalf("the request agent-server sent: %v", err)
	}
	start := time.Now()
	enc, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.Post(suite.Model.URL+"/chat/completions", "application/json", bytes.NewReader(enc))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: ")); ok && string(data) != "[DONE]" {
			var c relayChunk
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
		if err != nil {
			break
		}
	}
	return time.Since(start)
}

func p50ms(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(percentile(s, 50).Microseconds()) / 1000
}

// slope is the least-squares slope, in ms per message, of the p50 of
// times[i] over historyLengths[i].
func slope(times [][]time.Duration) float64 {
	var sx, sy, sxx, sxy float64
	for i, n := range historyLengths {
		x, y := float64(n), p50ms(times[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	k := float64(len(historyLengths))
	return (k*sxy - sx*sy) / (k*sxx - sx*sx)
}
