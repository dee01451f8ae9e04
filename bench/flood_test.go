package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// floodBytes is what BenchmarkOutputFlood's shell call prints: the 1 GB of
// the issue that measured 1.5 GB of peak RSS and a 1 GB database before
// live output was capped.
const floodBytes = 1 << 30

// BenchmarkOutputFlood runs a shell call printing 1 GB in a run of an
// agent-server of its own with the default store (SQLite in a fresh data
// folder) and the default -max-live-output (4 MiB). It reports
// agent-server's peak RSS over the whole benchmark (VmHWM: peak-rss-MB),
// what each flood added to the database (db-MB/flood, the WAL aside:
// SQLite's checkpoints bound it) and to the event log (output events per
// flood, events/flood), and the flood's time (s/flood).
//
//	go test -run '^$' -bench OutputFlood -benchtime 1x ./bench
func BenchmarkOutputFlood(b *testing.B) {
	data := b.TempDir()
	srv, err := suite.StartServer(suite.Plugins, []string{"-log-level", "info", "-data-dir", data})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			b.Errorf("agent-server: %v", err)
		}
	}()
	c, err := client.Dial(srv.Addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	system := suite.Router.Add(b, func(step int, _ *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: fmt.Sprintf(
				`{"command":"yes 'a line of a chatty tool, printed again and again' | head -c %d"}`, floodBytes)}}}
		}
		return fakemodel.Turn{Text: "done"}
	})
	a := benchAgentsOn(b, c, 1, system, []string{"shell"})[0]
	must := func(n int64, err error) int64 {
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	db := filepath.Join(data, "agentcore.db")
	before := must(e2e.FileSize(db))
	var events int
	var took time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := a.Send(context.Background(), "print a lot", client.Callbacks{
			OnToolOutput: func(*agentv1.ToolOutputEvent) { events++ },
		})
		took += time.Since(start)
		if err != nil || res.Text != "done" {
			b.Fatalf("send: %v %v", res, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(must(e2e.ProcMemory(srv.Cmd.Process.Pid, "VmHWM")))/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(must(e2e.FileSize(db))-before)/float64(b.N)/(1<<20), "db-MB/flood")
	b.ReportMetric(float64(events)/float64(b.N), "events/flood")
	b.ReportMetric(took.Seconds()/float64(b.N), "s/flood")
}
