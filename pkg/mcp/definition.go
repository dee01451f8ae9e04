package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"gopkg.in/yaml.v3"
)

// TransportType names how an MCP server is reached.
type TransportType string

// The three transports.
const (
	// TransportStdio starts the server as a child process and speaks over its stdin/stdout.
	TransportStdio TransportType = "stdio"
	// TransportHTTP is the streamable HTTP transport.
	TransportHTTP TransportType = "http"
	// TransportSSE is the older HTTP+SSE transport (protocol 2024-11-05).
	TransportSSE TransportType = "sse"
)

// maxNameLen is the longest tool name the plugin protocol accepts.
const maxNameLen = 64

// DefaultDiscoveryTimeout bounds connecting to a server and listing what it offers
// when a definition sets no discoveryTimeout.
const DefaultDiscoveryTimeout = 60 * time.Second

// Definition is one MCP server declared in a tool directory by a file
// NAME.mcp.json, NAME.mcp.yaml or NAME.mcp.yml.
type Definition struct {
	// Path is the definition file's absolute path; errors name it.
	Path string
	// Name is the file's name without its .mcp.json/.mcp.yaml/.mcp.yml suffix.
	Name string
	// Transport says how to reach the server.
	Transport Transport
	// Prefix is put before every tool name the server yields.
	Prefix string
	// DiscoveryTimeout bounds connecting and listing; zero means DefaultDiscoveryTimeout.
	DiscoveryTimeout time.Duration
	// CallTimeout is the declared timeout of every tool the server yields; zero means none.
	CallTimeout time.Duration
	// Reuse keeps one connection open between calls instead of one per call.
	Reuse bool
	// OAuth, when set, authorizes an http or sse server's requests with
	// OAuth 2.1 tokens (oauthdef.go).
	OAuth *OAuth
	// Sampling, when set, names the model that answers the server's
	// sampling requests (sampling.go); nil: the calling run's.
	Sampling *Sampling
}

// Transport is the connection part of a Definition.
type Transport struct {
	// Type is stdio, http or sse.
	Type TransportType
	// Command is the stdio server's executable: an absolute path, or a bare name looked up in PATH.
	Command string
	// Args are the stdio server's arguments.
	Args []string
	// Env is added to the few variables a stdio server inherits (HOME, LOGNAME, PATH, SHELL, TERM, USER).
	Env map[string]string
	// Cwd is the stdio server's absolute working directory.
	Cwd string
	// URL is the http or sse endpoint.
	URL string
	// Headers are sent with every http or sse request.
	Headers map[string]string
}

// DefinitionName returns the NAME of a file NAME.mcp.json, NAME.mcp.yaml or
// NAME.mcp.yml, and false for any other file name.
func DefinitionName(fileName string) (string, bool) {
	base := filepath.Base(fileName)
	for _, suffix := range []string{".mcp.json", ".mcp.yaml", ".mcp.yml"} {
		if name, ok := strings.CutSuffix(base, suffix); ok && name != "" {
			return name, true
		}
	}
	return "", false
}

// ReadDefinition reads and checks the definition file at path.
func ReadDefinition(path string) (*Definition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp definition: %w", err)
	}
	return ParseDefinition(path, data)
}

// ParseDefinition checks data as the content of the definition file at path.
// Unknown fields and bad values are errors naming the file and the field.
// A relative command or cwd is resolved against the file's folder, which is
// also the default cwd.
func ParseDefinition(path string, data []byte) (*Definition, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("mcp definition %s: %w", path, err)
	}
	name, ok := DefinitionName(abs)
	if !ok {
		return nil, fmt.Errorf("mcp definition %s: file name must end in .mcp.json, .mcp.yaml or .mcp.yml", abs)
	}
	var doc any
	if strings.HasSuffix(abs, ".json") {
		doc, err = decodeJSON(data)
	} else {
		doc, err = decodeYAML(data)
	}
	if err == nil {
		var def *Definition
		def, err = definitionFrom(doc, filepath.Dir(abs))
		if err == nil {
			def.Path, def.Name = abs, name
			return def, nil
		}
	}
	return nil, fmt.Errorf("mcp definition %s: %w", abs, err)
}

// decodeJSON decodes one JSON document, keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			// Offset counts the bytes read, the offending one included.
			line, col := position(data, max(syntax.Offset-1, 0))
			return nil, fmt.Errorf("line %d, column %d: %w", line, col, err)
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON object")
	}
	return doc, nil
}

// position turns a 0-based byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// decodeYAML decodes one YAML document.
func decodeYAML(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	return doc, nil
}

// fieldError is a bad value at a field path such as transport.args[1].
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func badField(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// fields is one decoded object being read, with the path that names it in errors.
type fields struct {
	path string
	m    map[string]any
}

func objectAt(path string, v any) (fields, error) {
	m, ok := v.(map[string]any)
	if !ok {
		where := path
		if where == "" {
			where = "the file"
		}
		return fields{}, badField(where, "want an object, got %s", describe(v))
	}
	return fields{path: path, m: m}, nil
}

func (f fields) name(key string) string {
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

// only fails on the first key (in sorted order) that is not allowed.
func (f fields) only(allowed []string, context string) error {
	keys := make([]string, 0, len(f.m))
	for k := range f.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return badField(f.name(k), "unknown field%s (known: %s)", context, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (f fields) has(key string) bool {
	_, ok := f.m[key]
	return ok
}

func (f fields) str(key string) (string, error) {
	v, ok := f.m[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badField(f.name(key), "want a string, got %s", describe(v))
	}
	return s, nil
}

func (f fields) boolean(key string) (bool, error) {
	v, ok := f.m[key]
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, badField(f.name(key), "want true or false, got %s", describe(v))
	}
	return b, nil
}

func (f fields) strings(key string) ([]string, error) {
	v, ok := f.m[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badField(f.name(key), "want a list of strings, got %s", describe(v))
	}
	out := make([]string, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, badField(fmt.Sprintf("%s[%d]", f.name(key), i), "want a string, got %s (quote it)", describe(item))
		}
		out[i] = s
	}
	return out, nil
}

func (f fields) stringMap(key string, check func(field, k, v string) error) (map[string]string, error) {
	v, ok := f.m[key]
	if !ok {
		return nil, nil
	}
	obj, err := objectAt(f.name(key), v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(obj.m))
	for k, item := range obj.m {
		s, ok := item.(string)
		if !ok {
			return nil, badField(obj.name(k), "want a string, got %s (quote it)", describe(item))
		}
		if err := check(obj.name(k), k, s); err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

func (f fields) duration(key string) (time.Duration, error) {
	if !f.has(key) {
		return 0, nil
	}
	s, err := f.str(key)
	if err != nil {
		return 0, badField(f.name(key), "want a duration such as \"30s\" or \"2m\", got %s", describe(f.m[key]))
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, badField(f.name(key), "want a positive duration such as \"30s\" or \"2m\", got %q", s)
	}
	return d, nil
}

// describe names a decoded value's kind for error messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("%t", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case json.Number, int, int64, uint64, float64:
		return fmt.Sprintf("number %v", v)
	default:
		return fmt.Sprintf("%v", v)
	}
}

// nameRune reports whether r may be part of a tool name (^[a-zA-Z0-9_-]{1,64}$).
func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// checkPrefix accepts what may start a tool name (^[a-zA-Z0-9_-]{1,64}$), leaving room for one character.
func checkPrefix(prefix string) error {
	if len(prefix) > maxNameLen-1 || strings.IndexFunc(prefix, func(r rune) bool { return !nameRune(r) }) >= 0 {
		return badField("prefix", "%q may only hold letters, digits, _ and - (at most %d)", prefix, maxNameLen-1)
	}
	return nil
}

// definitionFrom checks a decoded document and builds the Definition it
// declares; relative paths are resolved against dir.
func definitionFrom(doc any, dir string) (*Definition, error) {
	top, err := objectAt("", doc)
	if err != nil {
		return nil, err
	}
	if err := top.only([]string{"transport", "prefix", "discoveryTimeout", "callTimeout", "reuse", "oauth", "sampling"}, ""); err != nil {
		return nil, err
	}
	def := &Definition{}
	if def.Prefix, err = top.str("prefix"); err != nil {
		return nil, err
	}
	if err := checkPrefix(def.Prefix); err != nil {
		return nil, err
	}
	if def.DiscoveryTimeout, err = top.duration("discoveryTimeout"); err != nil {
		return nil, err
	}
	if def.CallTimeout, err = top.duration("callTimeout"); err != nil {
		return nil, err
	}
	if def.Reuse, err = top.boolean("reuse"); err != nil {
		return nil, err
	}
	if !top.has("transport") {
		return nil, badField("transport", "missing (an object with type stdio, http or sse)")
	}
	tr, err := objectAt("transport", top.m["transport"])
	if err != nil {
		return nil, err
	}
	if def.Transport, err = transportFrom(tr, dir); err != nil {
		return nil, err
	}
	if top.has("oauth") {
		o, err := objectAt("oauth", top.m["oauth"])
		if err != nil {
			return nil, err
		}
		if def.OAuth, err = oauthFrom(o, dir); err != nil {
			return nil, err
		}
	}
	if top.has("sampling") {
		sf, err := objectAt("sampling", top.m["sampling"])
		if err != nil {
			return nil, err
		}
		if def.Sampling, err = samplingFrom(sf); err != nil {
			return nil, err
		}
	}
	return def, def.checkOAuth()
}

func transportFrom(f fields, dir string) (Transport, error) {
	var t Transport
	typ, err := f.str("type")
	if err != nil {
		return t, err
	}
	t.Type = TransportType(typ)
	switch t.Type {
	case TransportStdio:
		return t, stdioFrom(f, dir, &t)
	case TransportHTTP, TransportSSE:
		return t, httpFrom(f, &t)
	case "":
		return t, badField(f.name("type"), "missing (stdio, http or sse)")
	default:
		return t, badField(f.name("type"), "%q is not a transport (stdio, http or sse)", typ)
	}
}

func stdioFrom(f fields, dir string, t *Transport) error {
	var err error
	if err = f.only([]string{"type", "command", "args", "env", "cwd"}, " for a stdio transport"); err != nil {
		return err
	}
	if t.Command, err = f.str("command"); err != nil {
		return err
	}
	if strings.TrimSpace(t.Command) == "" {
		return badField(f.name("command"), "missing (the server's executable)")
	}
	// A bare name is looked up in PATH; a path with a slash is relative to the definition.
	if strings.ContainsRune(t.Command, filepath.Separator) && !filepath.IsAbs(t.Command) {
		t.Command = filepath.Join(dir, t.Command)
	}
	if t.Args, err = f.strings("args"); err != nil {
		return err
	}
	if t.Env, err = f.stringMap("env", checkEnv); err != nil {
		return err
	}
	if t.Cwd, err = f.str("cwd"); err != nil {
		return err
	}
	switch {
	case t.Cwd == "":
		t.Cwd = dir
	case !filepath.IsAbs(t.Cwd):
		t.Cwd = filepath.Join(dir, t.Cwd)
	}
	return nil
}

func checkEnv(field, k, v string) error {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return badField(field, "not a valid variable name")
	}
	if strings.ContainsRune(v, 0) {
		return badField(field, "value holds a NUL byte")
	}
	return nil
}

func httpFrom(f fields, t *Transport) error {
	var err error
	if err = f.only([]string{"type", "url", "headers"}, " for an "+string(t.Type)+" transport"); err != nil {
		return err
	}
	if t.URL, err = f.str("url"); err != nil {
		return err
	}
	if t.URL == "" {
		return badField(f.name("url"), "missing (the server's endpoint)")
	}
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badField(f.name("url"), "want an absolute http or https URL, got %q", t.URL)
	}
	t.Headers, err = f.stringMap("headers", func(field, k, v string) error {
		if !httpguts.ValidHeaderFieldName(k) {
			return badField(field, "not a valid header name")
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			// The value may be a secret: never echo it.
			return badField(field, "value is not a valid header value")
		}
		return nil
	})
	return err
}

// check reports whether a Definition built in code (not parsed) can be used.
func (d *Definition) check() error {
	switch d.Transport.Type {
	case TransportStdio:
		if d.Transport.Command == "" {
			return badField("transport.command", "missing")
		}
	case TransportHTTP, TransportSSE:
		if d.Transport.URL == "" {
			return badField("transport.url", "missing")
		}
	default:
		return badField("transport.type", "%q is not a transport (stdio, http or sse)", d.Transport.Type)
	}
	if err := checkPrefix(d.Prefix); err != nil {
		return err
	}
	if d.DiscoveryTimeout < 0 || d.CallTimeout < 0 {
		return errors.New("timeouts must not be negative")
	}
	if d.OAuth != nil {
		if err := d.OAuth.check(func(k string) string { return "oauth." + k }); err != nil {
			return err
		}
	}
	return d.checkOAuth()
}

// checkOAuth refuses an oauth block where it cannot apply.
func (d *Definition) checkOAuth() error {
	switch {
	case d.OAuth == nil:
		return nil
	case d.Transport.Type != TransportHTTP:
		return badField("oauth", "only an http (streamable) server authorizes with OAuth here (a stdio server takes its secrets in transport.env; the sse transport has no OAuth in the MCP Go SDK)")
	case d.Reuse:
		// The kept connection would carry one person's token into
		// another's calls.
		return badField("reuse", "cannot be combined with oauth: every call connects with the token of its own run")
	}
	return nil
}

// label names the definition in errors: its path, or its name when built in code.
func (d *Definition) label() string {
	if d.Path != "" {
		return d.Path
	}
	if d.Name != "" {
		return d.Name
	}
	return string(d.Transport.Type) + " server"
}

func (d *Definition) discoveryTimeout() time.Duration {
	if d.DiscoveryTimeout > 0 {
		return d.DiscoveryTimeout
	}
	return DefaultDiscoveryTimeout
}
