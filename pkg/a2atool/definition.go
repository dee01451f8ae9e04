// Package a2atool makes a remote A2A agent a tool of the plugin protocol,
// as pkg/mcp does an MCP server: toolhost serves each definition file as a
// plugin process (`toolhost a2a-serve FILE`), so a call of the agent gets
// the same process, limits, audit, metrics and spans as any other tool.
//
// An agent is declared by a file in a tool directory, NAME.a2a.json,
// holding only data:
//
//	{
//	  "card": "https://agents.example.com/.well-known/agent-card.json",
//	  "headers": {"Authorization": "Bearer …"},
//	  "description": "Books meeting rooms.",
//	  "timeout": "5m",
//	  "discoveryTimeout": "30s"
//	}
//
// card is the agent card's URL (required); headers are sent with every
// request to the agent, the card's included, and stay on the server: the
// model never sees them. The tool is named NAME; its description is
// description, or the card's description and skills. timeout becomes the
// tool's declared timeout (which the host enforces); discoveryTimeout
// (default 30s) bounds reading the card.
//
// A call sends its input's task as a message (message/stream when the card
// says the agent streams, else message/send), streams the agent's status
// messages and artifacts as the call's live output, and answers with the
// task's artifacts: their text, data parts as JSON text, files as file
// parts. A task that ends input-required answers with the agent's question
// and the task's id: a next call with task_id continues that task. A
// failed, rejected or canceled task is an error result. Cancelling the call
// cancels the remote task (tasks/cancel) before the plugin process ends.
package a2atool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/agentcore/agentcore/pkg/tool/schema"
)

// Suffix ends the name of a definition file.
const Suffix = ".a2a.json"

// DefaultDiscoveryTimeout bounds reading the agent card when a definition sets no discoveryTimeout.
const DefaultDiscoveryTimeout = 30 * time.Second

// Definition is one remote agent declared by a file NAME.a2a.json.
type Definition struct {
	// Path is the file's absolute path; errors name it.
	Path string
	// Name is the file's name without .a2a.json: the tool's name.
	Name string
	// Card is the agent card's URL.
	Card string
	// Headers are sent with every request to the agent.
	Headers map[string]string
	// Description, if set, is the tool's description in place of the card's.
	Description string
	// Timeout is the tool's declared timeout; zero: none.
	Timeout time.Duration
	// DiscoveryTimeout bounds reading the card; zero: DefaultDiscoveryTimeout.
	DiscoveryTimeout time.Duration
}

// file is a definition file's JSON.
type file struct {
	Card             string            `json:"card"`
	Headers          map[string]string `json:"headers"`
	Description      string            `json:"description"`
	Timeout          string            `json:"timeout"`
	DiscoveryTimeout string            `json:"discoveryTimeout"`
}

// DefinitionName returns the NAME of a file NAME.a2a.json, and false for any other file name.
func DefinitionName(fileName string) (string, bool) {
	name, ok := strings.CutSuffix(filepath.Base(fileName), Suffix)
	return name, ok && name != ""
}

// ReadDefinition reads and checks the definition file at path.
func ReadDefinition(path string) (*Definition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("a2a definition: %w", err)
	}
	return ParseDefinition(path, data)
}

// ParseDefinition checks data as the content of the definition file at
// path. Unknown fields and bad values are errors naming the file and the
// field; a header's value (maybe a secret) is never echoed.
func ParseDefinition(path string, data []byte) (*Definition, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("a2a definition %s: %w", path, err)
	}
	def, err := parse(abs, data)
	if err != nil {
		return nil, fmt.Errorf("a2a definition %s: %w", abs, err)
	}
	return def, nil
}

func parse(abs string, data []byte) (*Definition, error) {
	name, ok := DefinitionName(abs)
	if !ok {
		return nil, errors.New("file name must end in " + Suffix)
	}
	if !schema.ValidName.MatchString(name) {
		return nil, fmt.Errorf("the tool's name %q (the file's name) may only hold letters, digits, _ and - (at most 64)", name)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON object")
	}
	def := &Definition{Path: abs, Name: name, Card: f.Card, Headers: f.Headers, Description: f.Description}
	if f.Card == "" {
		return nil, errors.New("card: missing (the agent card's URL)")
	}
	if u, err := url.Parse(f.Card); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("card: want an absolute http or https URL, got %q", f.Card)
	}
	for k, v := range f.Headers {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("headers.%s: not a valid header name", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, fmt.Errorf("headers.%s: value is not a valid header value", k)
		}
	}
	var err error
	if def.Timeout, err = duration("timeout", f.Timeout); err != nil {
		return nil, err
	}
	if def.DiscoveryTimeout, err = duration("discoveryTimeout", f.DiscoveryTimeout); err != nil {
		return nil, err
	}
	return def, nil
}

// duration reads a positive duration field; "" is zero.
func duration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a positive duration such as \"30s\" or \"2m\", got %q", field, s)
	}
	return d, nil
}

// discoveryTimeout is the bound of reading the card.
func (d *Definition) discoveryTimeout() time.Duration {
	if d.DiscoveryTimeout > 0 {
		return d.DiscoveryTimeout
	}
	return DefaultDiscoveryTimeout
}
