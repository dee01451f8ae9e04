package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
)

// docSystem is the system prompt of the agent in the session of
// docs/clients/agentctl.md; its model requests go to docScript.
const docSystem = "You are a friendly assistant. Use the tools you have."

// docScript is the model of that session: it greets whom a task names and
// adds the numbers it gives, then reports the results.
var docScript = eachTask(func(step int, req *fakemodel.Request) fakemodel.Turn {
	if step > 0 {
		results := e2e.LastToolResults(req)
		for _, r := range results {
			if strings.HasPrefix(r, "Permission denied") {
				return fakemodel.Turn{TextChunks: []string{"All right, ", "I did not run it."},
					Usage: &fakemodel.Usage{Input: 210, Output: 9}}
			}
		}
		return fakemodel.Turn{TextChunks: []string{"Done: ", strings.Join(results, " and "), "."},
			Usage: &fakemodel.Usage{Input: 190, Output: 14}}
	}
	task := e2e.LastUserText(req)
	var calls []fakemodel.ToolCall
	if m := regexp.MustCompile(`(?i)(?:hello to|greet) (\w+)`).FindStringSubmatch(task); m != nil {
		calls = append(calls, fakemodel.ToolCall{ID: "call_hello", Name: "say_hello", Arguments: `{"name":"` + m[1] + `"}`})
	}
	if m := regexp.MustCompile(`(?i)add (\d+) and (\d+)`).FindStringSubmatch(task); m != nil {
		calls = append(calls, fakemodel.ToolCall{ID: "call_add", Name: "add", Arguments: `{"a":` + m[1] + `,"b":` + m[2] + `}`})
	}
	return fakemodel.Turn{TextChunks: []string{"Let me ", "do that."}, ToolCalls: calls,
		Usage: &fakemodel.Usage{Input: 150, Output: 30}}
})

// TestAgentctlDocSession runs the session of docs/clients/agentctl.md: each
// command of its console blocks in order, against an agent-server of its
// own with the ready plugins; a chat is fed the lines typed after its
// prompts. What each prints (stdout, then stderr) must be what the page
// shows, but for ids, times, durations and the spaces that align columns.
func TestAgentctlDocSession(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "docs", "clients", "agentctl.md"))
	if err != nil {
		t.Fatal(err)
	}
	suite.Router.Set(t, docSystem, docScript)
	srv, err := suite.StartServer(suite.Plugins, []string{"-store", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	env := []string{"AGENTCORE_ADDR=" + srv.Addr}

	ids := map[string]string{} // the page's run and call ids: this run's
	steps := 0
	for _, block := range regexp.MustCompile("(?s)```console\n(.*?)```").FindAllStringSubmatch(string(page), -1) {
		for _, step := range consoleSteps(t, block[1]) {
			steps++
			args := shellWords(t, idsReplaced(step.command, ids))
			if args[0] != "agentctl" {
				t.Fatalf("a console block of the page runs %q: only agentctl commands go in them", step.command)
			}
			r := ctl(t, env, step.input, args[1:]...)
			got := r.stdout + r.stderr
			mapIDs(step.output, got, ids)
			if want := idsReplaced(step.output, ids); normalize(got) != normalize(want) {
				t.Errorf("$ %s\nprinted (exit code %d):\n%s\nthe page shows:\n%s", step.command, r.code, got, step.output)
			}
		}
	}
	if steps < 8 {
		t.Errorf("the page's console blocks hold %d commands", steps)
	}
}

// consoleStep is a command of a console block, the lines typed into it and
// what it printed.
type consoleStep struct {
	command, input, output string
}

// consoleSteps splits a console block into its commands: a line "$ …" is a
// command, the lines after it its output, in which a chat's prompts ("> ",
// "allow? [y/n] ", "reason (enter for none): ") are followed by what was
// typed.
func consoleSteps(t *testing.T, block string) []consoleStep {
	t.Helper()
	var steps []consoleStep
	for _, line := range strings.SplitAfter(block, "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, consoleStep{command: strings.TrimSpace(cmd)})
			continue
		}
		if len(steps) == 0 {
			t.Fatalf("a console block starts with %q, not a command", line)
		}
		s := &steps[len(steps)-1]
		s.output += line
		for _, prompt := range []string{"> ", "allow? [y/n] ", "reason (enter for none): "} {
			if typed, ok := strings.CutPrefix(line, prompt); ok && strings.HasPrefix(s.command, "agentctl chat") {
				s.input += typed
			}
		}
	}
	return steps
}

// shellWords splits a command line as a shell does words in quotes.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
			}
			in = false
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// docID matches the ids a server makes: runs', and calls' it renamed.
var docID = regexp.MustCompile(`\b(?:run|call)_[0-9a-f]{16}\b`)

// mapIDs pairs the ids the page shows with those printed, in the order they
// come.
func mapIDs(page, printed string, ids map[string]string) {
	want, got := docID.FindAllString(page, -1), docID.FindAllString(printed, -1)
	for i := range min(len(want), len(got)) {
		if _, ok := ids[want[i]]; !ok {
			ids[want[i]] = got[i]
		}
	}
}

// idsReplaced puts this run's ids for the page's.
func idsReplaced(s string, ids map[string]string) string {
	return docID.ReplaceAllStringFunc(s, func(id string) string {
		if v, ok := ids[id]; ok {
			return v
		}
		return id
	})
}

var (
	docDate     = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	docDuration = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|ms|s)\b`)
	docSpaces   = regexp.MustCompile(`[ \t]+`)
	docReplica  = regexp.MustCompile(`(?m)^replica .*$`)
)

// normalize drops what differs from run to run: times, durations, the
// replica's name (the host's), the spaces that align a table's columns.
func normalize(s string) string {
	s = docDate.ReplaceAllString(s, "DATE")
	s = docDuration.ReplaceAllString(s, "DURATION")
	s = docSpaces.ReplaceAllString(s, " ")
	s = docReplica.ReplaceAllString(s, "replica REPLICA")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}
