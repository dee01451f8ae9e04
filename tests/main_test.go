// Package tests holds agentcore's end-to-end tests: the real agent-server
// binary on a free port, the real plugins, the fake model server speaking
// the chat protocol on 127.0.0.1, and the Go client (internal/e2e is the
// harness).
package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/sdk/client"
)

// suite is what every test shares: built binaries, the fake model and one
// running server.
var suite struct {
	*e2e.Suite
	server *e2e.Server
	client *client.Client
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	suite.Suite, err = e2e.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := runSuite(m)
	suite.Close()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	return code
}

// runSuite runs the tests against one agent-server, which it starts and
// stops, and checks that the API key never showed in its logs.
func runSuite(m *testing.M) int {
	var err error
	suite.server, err = suite.StartServer(suite.Plugins, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start agent-server:", err)
		return 1
	}
	suite.client, err = client.Dial(suite.server.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()

	suite.client.Close()
	if err := suite.server.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-server did not stop cleanly:", err)
		code = 1
	}
	if strings.Contains(suite.server.Logs(), e2e.TestKey) {
		for _, line := range strings.Split(suite.server.Logs(), "\n") {
			if strings.Contains(line, e2e.TestKey) {
				fmt.Fprintln(os.Stderr, "the API key appeared in the server's logs:", line)
			}
		}
		code = 1
	}
	return code
}
