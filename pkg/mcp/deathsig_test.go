package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// hostEnv, when set, makes the test binary stand in for toolhost: it calls
// the hang tool of the stdio server declared at the path it holds.
const hostEnv = "AGENTCORE_MCP_TEST_HOST"

// runHost prints the stdio server's pid, then waits in the call until killed.
func runHost() int {
	def, err := ReadDefinition(os.Getenv(hostEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := NewBridge(def)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = s.Call(context.Background(), "hang", "{}", func(c *pluginv1.OutputChunk) { _, _ = os.Stdout.Write(c.Data) })
	fmt.Fprintln(os.Stderr, "hang returned:", err)
	return 1
}

func TestStdioServerDiesWithTheProcessThatStartedIt(t *testing.T) {
	def := stdioDefinition(t, variantFull, "")
	host := exec.Command(testBinary(t))
	host.Env = append(os.Environ(), hostEnv+"="+def.Path)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(10 * time.Second):
	}
	// SIGKILL: the host gets no chance to clean up.
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait() // also ends the reader, if it still waits
	var pid int
	if _, err := fmt.Sscanf(line, "0 pid %d", &pid); err != nil {
		t.Fatalf("host said %q, not the server's pid: %v", line, err)
	}
	waitGone(t, pid) // the stdio server must not survive its host
}
