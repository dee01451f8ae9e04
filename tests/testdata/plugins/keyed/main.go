// Command keyed is the crash tests' plugin (tests/crash_test.go): its tools
// record in files of a folder ($KEYED_DIR) each call's idempotency key, the
// way a tool makes its side effects happen once, so that the test can count
// effects.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct {
	N  int `json:"n" jsonschema:"a number the result repeats"`
	MS int `json:"ms" jsonschema:"how long the call works, in milliseconds"`
}

// dir is the folder of the record files: $KEYED_DIR, set by the test on
// the server, whose plugins inherit it.
func dir() string { return os.Getenv("KEYED_DIR") }

// work waits in.MS, as a call that takes time (the crash test kills the
// server in the middle of some).
func work(ctx context.Context, in input) error {
	select {
	case <-time.After(time.Duration(in.MS) * time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// appendLine appends a line to a file of dir, synced.
func appendLine(dir, name, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// effect makes the call's effect once per idempotency key. The effect is a
// file named for the key in keys/, holding the number, made atomically (a
// link of a written file): a key seen before has its effect already, and
// the call answers as the first did.
func effect(ctx context.Context, in input, _ tool.Emit) (any, error) {
	c := tool.CallInfo(ctx)
	if err := appendLine(dir(), "executions", fmt.Sprintf("%s %d", c.IdempotencyKey, c.Attempt)); err != nil {
		return nil, err
	}
	if err := work(ctx, in); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir(), "effect-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = fmt.Fprintf(tmp, "%d\n", in.N)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	err = os.Link(tmp.Name(), filepath.Join(dir(), "keys", strings.ReplaceAll(c.IdempotencyKey, "/", "_")))
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return fmt.Sprintf("recorded %d", in.N), nil
}

// note has an effect at each execution (it keeps no keys).
func note(ctx context.Context, in input, _ tool.Emit) (any, error) {
	c := tool.CallInfo(ctx)
	if err := work(ctx, in); err != nil {
		return nil, err
	}
	if err := appendLine(dir(), "notes", c.IdempotencyKey); err != nil {
		return nil, err
	}
	return fmt.Sprintf("noted %d", in.N), nil
}

func main() {
	tool.Serve(
		tool.New("record", "Records a number once per call, however often the call runs.", effect, tool.Idempotent()),
		tool.New("note", "Notes a number (each execution notes it again).", note),
	)
}
