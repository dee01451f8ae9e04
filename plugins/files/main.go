// Command files is a tool plugin offering read_file, write_file and list_dir.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentcore/agentcore/sdk/tool"
)

const defaultLimit = 2000

type readInput struct {
	Path   string `json:"path" jsonschema:"the file to read"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first line to return, counting from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return (default 2000)"`
}

func readFile(_ context.Context, in readInput, _ tool.Emit) (any, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return nil, errors.New("offset and limit must not be negative")
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = defaultLimit
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var b strings.Builder
	n, last := 0, 0
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			n++
			if n >= offset && n < offset+limit {
				b.WriteString(line)
				last = n
			}
		}
		if err != nil {
			break
		}
	}
	switch {
	case n == 0:
		return "(empty file)", nil
	case offset > n:
		return nil, fmt.Errorf("offset %d is past the end: the file has %d lines", offset, n)
	case last < n:
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[lines %d-%d of %d; call read_file with offset=%d to read on]", offset, last, n, last+1)
	}
	return b.String(), nil
}

type writeInput struct {
	Path    string `json:"path" jsonschema:"the file to write; missing parent directories are created"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
}

func writeFile(_ context.Context, in writeInput, _ tool.Emit) (any, error) {
	if in.Path == "" {
		return nil, errors.New("path is empty")
	}
	if err := os.MkdirAll(filepath.Dir(in.Path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
		return nil, err
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path), nil
}

type listInput struct {
	Path string `json:"path" jsonschema:"the directory to list"`
}

type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size,omitempty"`
}

func listDir(_ context.Context, in listInput, _ tool.Emit) (any, error) {
	entries, err := os.ReadDir(in.Path)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(entries))
	for _, e := range entries {
		d := dirEntry{Name: e.Name(), Type: "file"}
		switch {
		case e.IsDir():
			d.Type = "dir"
		case e.Type()&os.ModeSymlink != 0:
			d.Type = "symlink"
		default:
			if info, err := e.Info(); err == nil {
				d.Size = info.Size()
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func main() {
	tool.Serve(
		tool.New("read_file", "Reads a text file, in pages of lines: offset is the first line (from 1), "+
			"limit the number of lines (default 2000). The end says how to read on.", readFile,
			tool.ReadOnly(), tool.Idempotent()),
		tool.New("write_file", "Writes a file whole, creating it and its parent directories if needed.", writeFile,
			tool.Idempotent()),
		tool.New("list_dir", "Lists a directory: name, type (file, dir, symlink) and size of each entry.", listDir,
			tool.ReadOnly(), tool.Idempotent()),
	)
}
