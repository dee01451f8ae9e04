// Command reasongen writes what derives from the ErrorReason enum of
// proto/agentcore/v1/errors.proto: the tables of docs/errors.md and the Go
// client's Reason constants (sdk/client/reasons.go). Run it from the
// repository's root after changing the enum (make proto does); its test
// fails while either is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Paths from the repository's root.
const (
	protoFile = "proto/agentcore/v1/errors.proto"
	docFile   = "docs/errors.md"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "reasongen:", err)
		os.Exit(1)
	}
}

// run rewrites the files under root.
func run(root string) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	for path, b := range files {
		if err := os.WriteFile(filepath.Join(root, path), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate is what each file under root should hold, by path.
func generate(root string) (map[string][]byte, error) {
	src, err := os.ReadFile(filepath.Join(root, protoFile))
	if err != nil {
		return nil, err
	}
	secs, err := parse(src)
	if err != nil {
		return nil, err
	}
	page, err := os.ReadFile(filepath.Join(root, docFile))
	if err != nil {
		return nil, err
	}
	doc, err := replaceDoc(page, secs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docFile, err)
	}
	code, err := clientCode(secs)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{docFile: doc, clientFile: code}, nil
}
