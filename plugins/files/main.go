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
	"strconv"
	"strings"

	"github.com/agentcore/agentcore/sdk/tool"
)

// Bounds of one read_file call, so that no file (a huge log, a single
// endless line, /dev/zero) can grow the plugin or the result without end.
const (
	defaultLimit = 2000     // lines per call when the input sets none
	maxLineBytes = 2000     // bytes kept of one line; the rest is cut with a note
	maxCallBytes = 64 << 10 // bytes of lines per call; the rest on the next call
	maxScanBytes = 64 << 20 // bytes read to count the lines after the page
)

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
	r := bufio.NewReaderSize(f, 64<<10)
	var b strings.Builder
	n, last := 0, 0             // lines seen, last line kept
	full := false               // the call's byte budget is spent
	scanned, capped := 0, false // bytes read; stopped counting at maxScanBytes
	for {
		// A line comes in fragments of at most the buffer's size: only the
		// first maxLineBytes of it are kept.
		lineLen, kept := 0, 0
		keep := n+1 >= offset && n+1 < offset+limit && !full
		var err error
		for {
			var frag []byte
			frag, err = r.ReadSlice('\n')
			lineLen += len(frag)
			scanned += len(frag)
			if keep && kept < maxLineBytes {
				take := frag[:min(len(frag), maxLineBytes-kept)]
				b.Write(take)
				kept += len(take)
			}
			if err != bufio.ErrBufferFull || scanned > maxScanBytes {
				break
			}
		}
		if lineLen == 0 {
			break
		}
		n++
		if keep {
			if cut := lineLen - kept; cut > 0 {
				fmt.Fprintf(&b, "… [line %d cut: %d more bytes]\n", n, cut)
			}
			last = n
			if b.Len() >= maxCallBytes {
				full = true
			}
		}
		if err != nil && err != bufio.ErrBufferFull || scanned > maxScanBytes {
			capped = err == bufio.ErrBufferFull || err == nil
			break
		}
	}
	total := strconv.Itoa(n)
	if capped {
		total = "more than " + total
	}
	switch {
	case n == 0:
		return "(empty file)", nil
	case last == 0 && capped:
		return nil, fmt.Errorf("offset %d is beyond the first %d MiB of the file (%s lines), which is as far as read_file reads", offset, maxScanBytes>>20, total)
	case last == 0:
		return nil, fmt.Errorf("offset %d is past the end: the file has %d lines", offset, n)
	case last < n || capped:
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		why := ""
		if full {
			why = fmt.Sprintf(" (a call returns at most %d KiB)", maxCallBytes>>10)
		}
		fmt.Fprintf(&b, "[lines %d-%d of %s%s; call read_file with offset=%d to read on]", offset, last, total, why, last+1)
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
