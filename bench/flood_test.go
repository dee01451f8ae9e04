package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	db := filepath.Join(data, "agentcore.db")
	before := fileSize(b, db)
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
	b.ReportMetric(float64(procStatusKB(b, srv.Cmd.Process.Pid, "VmHWM"))/1024, "peak-rss-MB")
	b.ReportMetric(float64(fileSize(b, db)-before)/float64(b.N)/(1<<20), "db-MB/flood")
	b.ReportMetric(float64(events)/float64(b.N), "events/flood")
	b.ReportMetric(took.Seconds()/float64(b.N), "s/flood")
}

// procStatusKB returns a field in kB of /proc/PID/status (VmHWM: the
// peak resident set).
func procStatusKB(b *testing.B, pid int, field string) int64 {
	b.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// fileSize is a file's size, 0 when it is missing.
func fileSize(b *testing.B, path string) int64 {
	b.Helper()
	info, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		b.Fatal(err)
	}
	return info.Size()
}
