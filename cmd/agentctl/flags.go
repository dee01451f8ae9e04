package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// errHelp is the error of a command line that asked for help (-h).
var errHelp = flag.ErrHelp

// newFlagSet returns a flag set that reports its errors instead of exiting.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed once, by the caller
	return fs
}

// command is a command's flag set, its connection flags and its usage line.
type command struct {
	fs    *flag.FlagSet
	e     *env
	usage string // e.g. "send AGENT TASK... [flags]"
}

// newCommand returns a command's flag set, with the connection flags.
func newCommand(e *env, name, usage string) *command {
	c := &command{fs: newFlagSet(name), e: e, usage: usage}
	e.conn.register(c.fs)
	return c
}

// parse reads args, flags and positional arguments in any order ("--"
// ends the flags), and checks that between min and max positional
// arguments came (max < 0: any number). ok is false when the command must
// end with code: after -h, or a usage error it printed.
func (c *command) parse(args []string, min, max int) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(c.fs, args)
	switch {
	case err == errHelp:
		c.help(c.e.stdout)
		return nil, exitOK, false
	case err != nil:
		return nil, usageError(c.e, fmt.Errorf("%s: %w", c.fs.Name(), err)), false
	case len(pos) < min || (max >= 0 && len(pos) > max):
		return nil, usageError(c.e, fmt.Errorf("usage: agentctl %s", c.usage)), false
	}
	return pos, exitOK, true
}

// help prints the command's usage and flags.
func (c *command) help(w io.Writer) {
	fmt.Fprintf(w, "usage: agentctl %s\n\nflags:\n", c.usage)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

// parseInterspersed parses args with fs, taking flags anywhere among the
// positional arguments (the flag package stops at the first of those), and
// returns the positional ones. After "--" every argument is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// askFlag is a --ask value: which tools' calls wait for a permission answer.
type askFlag struct {
	all   bool
	tools []string // when not all: none when empty
}

func (a *askFlag) String() string {
	switch {
	case a.all:
		return "all"
	case len(a.tools) == 0:
		return "none"
	}
	return strings.Join(a.tools, ",")
}

func (a *askFlag) Set(s string) error {
	*a = askFlag{}
	switch s = strings.TrimSpace(s); s {
	case "all", "*":
		a.all = true
	case "none", "":
	default:
		for _, name := range strings.Split(s, ",") {
			if name = strings.TrimSpace(name); name != "" {
				a.tools = append(a.tools, name)
			}
		}
	}
	return nil
}

// asks reports whether any call waits for an answer.
func (a *askFlag) asks() bool { return a.all || len(a.tools) > 0 }

// parseRunState reads a run state: running, succeeded, failed, stopped,
// interrupted, or the enum's name.
func parseRunState(s string) (agentv1.RunState, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(name, "RUN_STATE_") {
		name = "RUN_STATE_" + name
	}
	if v, ok := agentv1.RunState_value[name]; ok && v != 0 {
		return agentv1.RunState(v), nil
	}
	return 0, fmt.Errorf("--state %q: want running, succeeded, failed, stopped or interrupted", s)
}

// parseBusy reads a busy policy: replace, reject or queue.
func parseBusy(s string) (agentv1.BusyPolicy, error) {
	if s == "" {
		return agentv1.BusyPolicy_BUSY_POLICY_UNSPECIFIED, nil
	}
	if v, ok := agentv1.BusyPolicy_value["BUSY_POLICY_"+strings.ToUpper(s)]; ok && v != 0 {
		return agentv1.BusyPolicy(v), nil
	}
	return 0, fmt.Errorf("--busy %q: want replace, reject or queue", s)
}
