package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/sdk/client"
)

// storeSteps is how many model steps BenchmarkStoreBytes's run takes, each
// 200 characters of text streamed in 20 pieces and a shell call.
const storeSteps = 100

// storeOutput is what its other runs' shell call prints, under the live
// output cap.
const storeOutput = 1 << 20

// BenchmarkStoreBytes measures what runs cost the default store (SQLite,
// agent-server's own, in a fresh data folder): a run of 100 steps (200
// characters of streamed text and a shell call printing a line each), for
// its events per step (GetRun's event_bytes: event-bytes/step) and the
// database file's growth per step, history and indexes included
// (db-bytes/step, the WAL checkpointed by a clean stop); and a shell call printing 1 MiB, for the event bytes
// per byte of output (event-bytes/output-byte).
//
//	go test -run '^$' -bench StoreBytes -benchtime 1x ./bench
func BenchmarkStoreBytes(b *testing.B) {
	data := b.TempDir()
	db := filepath.Join(data, "agentcore.db")
	var srv *e2e.Server
	var c *client.Client
	start := func() {
		var err error
		if srv, err = suite.StartServer(suite.Plugins, []string{"-log-level", "info", "-data-dir", data}); err != nil {
			b.Fatal(err)
		}
		if c, err = client.Dial(srv.Addr); err != nil {
			b.Fatal(err)
		}
	}
	// stop stops the server, which checkpoints the WAL into the file, and
	// returns the file's size.
	stop := func() int64 {
		c.Close()
		if err := srv.Stop(); err != nil {
			b.Fatalf("agent-server: %v", err)
		}
		n, err := e2e.FileSize(db)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	text := strings.Split(strings.Repeat("0123456789", 20), "")
	pieces := make([]string, 20)
	for i := range pieces {
		pieces[i] = strings.Join(text[i*10:i*10+10], "")
	}
	system := suite.Router.Add(b, func(step int, req *fakemodel.Request) fakemodel.Turn {
		n, _ := strconv.Atoi(e2e.LastUserText(req))
		if n > 0 { // one call printing n bytes
			if step == 0 {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: fmt.Sprintf(`{"command":"yes 'a line of output' | head -c %d"}`, n)}}}
			}
			return fakemodel.Turn{Text: "done"}
		}
		if step < storeSteps-1 {
			return fakemodel.Turn{TextChunks: pieces, ToolCalls: []fakemodel.ToolCall{{ID: fmt.Sprintf("c%d", step), Name: "shell", Arguments: `{"command":"echo step"}`}}}
		}
		return fakemodel.Turn{TextChunks: pieces}
	})
	// An agent per run (the script's step counts the history's answers),
	// made before the file is measured.
	start()
	var ids []string
	for _, a := range benchAgentsOn(b, c, 3*b.N, system, []string{"shell"}) {
		ids = append(ids, a.ID)
	}
	before := stop()
	start()
	defer stop()
	ctx := context.Background()
	runBytes := func(input string) int64 {
		id := ids[0]
		ids = ids[1:]
		res, err := c.Agent(id).Send(ctx, input, client.Callbacks{})
		if err != nil {
			b.Fatal(err)
		}
		r, err := c.Run(ctx, res.RunID)
		if err != nil {
			b.Fatal(err)
		}
		return r.GetEventBytes()
	}
	var steps, output, printed int64
	b.ResetTimer()
	for range b.N {
		steps += runBytes("steps")
	}
	b.StopTimer()
	grown := stop() - before
	start()
	for range b.N {
		base := runBytes("1")
		output += runBytes(strconv.Itoa(storeOutput)) - base
		printed += storeOutput
	}
	b.ReportMetric(float64(steps)/float64(b.N*storeSteps), "event-bytes/step")
	b.ReportMetric(float64(grown)/float64(b.N*storeSteps), "db-bytes/step")
	b.ReportMetric(float64(output)/float64(printed), "event-bytes/output-byte")
}
