package mcp

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefinitionName(t *testing.T) {
	cases := []struct {
		file string
		name string
		ok   bool
	}{
		{"web.mcp.json", "web", true},
		{"dir/web.mcp.yaml", "web", true},
		{"a.b.mcp.yml", "a.b", true},
		{".mcp.json", "", false},
		{"web.json", "", false},
		{"web.mcp.json.bak", "", false},
		{"web.mcp", "", false},
	}
	for _, c := range cases {
		name, ok := DefinitionName(c.file)
		if name != c.name || ok != c.ok {
			t.Errorf("DefinitionName(%q) = %q, %v; want %q, %v", c.file, name, ok, c.name, c.ok)
		}
	}
}

func TestParseDefinition(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, file, data string
		want             *Definition
	}{
		{
			name: "stdio json", file: "fs.mcp.json",
			data: `{"transport": {"type": "stdio", "command": "./bin/server", "args": ["--root", "."], "env": {"TOKEN": "t"}, "cwd": "work"},
				"prefix": "fs_", "discoveryTimeout": "5s", "callTimeout": "2m", "reuse": true}`,
			want: &Definition{
				Name: "fs", Prefix: "fs_", DiscoveryTimeout: 5 * time.Second, CallTimeout: 2 * time.Minute, Reuse: true,
				Transport: Transport{Type: TransportStdio, Command: filepath.Join(dir, "bin/server"), Args: []string{"--root", "."},
					Env: map[string]string{"TOKEN": "t"}, Cwd: filepath.Join(dir, "work")},
			},
		},
		{
			name: "stdio bare command and absolute cwd", file: "n.mcp.json",
			data: `{"transport": {"type": "stdio", "command": "node", "cwd": "/srv"}}`,
			want: &Definition{Name: "n", Transport: Transport{Type: TransportStdio, Command: "node", Cwd: "/srv"}},
		},
		{
			name: "stdio default cwd", file: "d.mcp.yml",
			data: "transport:\n  type: stdio\n  command: /usr/bin/server\n",
			want: &Definition{Name: "d", Transport: Transport{Type: TransportStdio, Command: "/usr/bin/server", Cwd: dir}},
		},
		{
			name: "http yaml", file: "web.mcp.yaml",
			data: "transport:\n  type: http\n  url: https://example.com/mcp\n  headers:\n    Authorization: Bearer x\nprefix: web_\n",
			want: &Definition{Name: "web", Prefix: "web_", Transport: Transport{Type: TransportHTTP, URL: "https://example.com/mcp",
				Headers: map[string]string{"Authorization": "Bearer x"}}},
		},
		{
			name: "sampling profile", file: "s.mcp.yaml",
			data: "transport: {type: stdio, command: /usr/bin/server}\nsampling: {profile: cheap}\n",
			want: &Definition{Name: "s", Transport: Transport{Type: TransportStdio, Command: "/usr/bin/server", Cwd: dir}, Sampling: &Sampling{Profile: "cheap"}},
		},
		{
			name: "sse", file: "old.mcp.json",
			data: `{"transport": {"type": "sse", "url": "http://127.0.0.1:8080/sse"}}`,
			want: &Definition{Name: "old", Transport: Transport{Type: TransportSSE, URL: "http://127.0.0.1:8080/sse"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			got, err := ParseDefinition(path, []byte(c.data))
			if err != nil {
				t.Fatal(err)
			}
			c.want.Path = path
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseDefinitionErrors(t *testing.T) {
	const stdio = `"transport": {"type": "stdio", "command": "x"}`
	cases := []struct {
		name, file, data, want string
	}{
		{"empty json", "a.mcp.json", ``, "empty file"},
		{"empty yaml", "a.mcp.yaml", ``, "empty file"},
		{"syntax", "a.mcp.json", "{\n  \"transport\": {,\n}", "line 2, column 17: invalid character ','"},
		{"trailing data", "a.mcp.json", `{` + stdio + `} {}`, "unexpected data after the JSON object"},
		{"two yaml documents", "a.mcp.yaml", "transport: {type: stdio, command: x}\n---\nx: 1\n", "more than one YAML document"},
		{"not an object", "a.mcp.json", `[1]`, "the file: want an object, got a list"},
		{"wrong suffix", "a.json", `{}`, "file name must end in .mcp.json"},
		{"no transport", "a.mcp.json", `{}`, "transport: missing"},
		{"unknown field", "a.mcp.json", `{` + stdio + `, "timeout": "1s"}`, "timeout: unknown field (known: transport, prefix, discoveryTimeout, callTimeout, reuse, oauth, sampling)"},
		{"unknown transport field", "a.mcp.json", `{"transport": {"type": "stdio", "command": "x", "comand": "y"}}`, "transport.comand: unknown field for a stdio transport"},
		{"url for stdio", "a.mcp.json", `{"transport": {"type": "stdio", "command": "x", "url": "http://x"}}`, "transport.url: unknown field for a stdio transport"},
		{"command for http", "a.mcp.json", `{"transport": {"type": "http", "url": "http://x", "command": "y"}}`, "transport.command: unknown field for an http transport"},
		{"transport not an object", "a.mcp.json", `{"transport": "stdio"}`, `transport: want an object, got string "stdio"`},
		{"no type", "a.mcp.json", `{"transport": {"command": "x"}}`, "transport.type: missing"},
		{"bad type", "a.mcp.json", `{"transport": {"type": "ws"}}`, `transport.type: "ws" is not a transport`},
		{"no command", "a.mcp.json", `{"transport": {"type": "stdio"}}`, "transport.command: missing"},
		{"command not a string", "a.mcp.json", `{"transport": {"type": "stdio", "command": ["x"]}}`, "transport.command: want a string, got a list"},
		{"arg not a string", "a.mcp.json", `{"transport": {"type": "stdio", "command": "x", "args": ["a", 8080]}}`, "transport.args[1]: want a string, got number 8080 (quote it)"},
		{"yaml arg not a string", "a.mcp.yaml", "transport: {type: stdio, command: x, args: [--port, 8080]}", "transport.args[1]: want a string, got number 8080"},
		{"env not a string", "a.mcp.json", `{"transport": {"type": "stdio", "command": "x", "env": {"N": 1}}}`, "transport.env.N: want a string, got number 1"},
		{"bad env name", "a.mcp.json", `{"transport": {"type": "stdio", "command": "x", "env": {"A=B": "1"}}}`, "transport.env.A=B: not a valid variable name"},
		{"no url", "a.mcp.json", `{"transport": {"type": "http"}}`, "transport.url: missing"},
		{"relative url", "a.mcp.json", `{"transport": {"type": "sse", "url": "/sse"}}`, `transport.url: want an absolute http or https URL, got "/sse"`},
		{"bad header name", "a.mcp.json", `{"transport": {"type": "http", "url": "http://x", "headers": {"Bad Name": "v"}}}`, "transport.headers.Bad Name: not a valid header name"},
		{"bad header value is not echoed", "a.mcp.json", `{"transport": {"type": "http", "url": "http://x", "headers": {"Authorization": "secret\n"}}}`, "transport.headers.Authorization: value is not a valid header value"},
		{"bad duration", "a.mcp.json", `{` + stdio + `, "discoveryTimeout": "5 seconds"}`, `discoveryTimeout: want a positive duration such as "30s" or "2m", got "5 seconds"`},
		{"negative duration", "a.mcp.json", `{` + stdio + `, "callTimeout": "-1s"}`, `callTimeout: want a positive duration`},
		{"duration as number", "a.mcp.json", `{` + stdio + `, "callTimeout": 30000}`, `callTimeout: want a duration such as "30s" or "2m", got number 30000`},
		{"bad reuse", "a.mcp.json", `{` + stdio + `, "reuse": "yes"}`, `reuse: want true or false, got string "yes"`},
		{"bad prefix", "a.mcp.json", `{` + stdio + `, "prefix": "web."}`, `prefix: "web." may only hold letters, digits, _ and -`},
		{"long prefix", "a.mcp.json", `{` + stdio + `, "prefix": "` + strings.Repeat("p", 64) + `"}`, `at most 63`},
		{"sampling not an object", "a.mcp.json", `{` + stdio + `, "sampling": "fast"}`, `sampling: want an object, got string "fast"`},
		{"sampling without a profile", "a.mcp.json", `{` + stdio + `, "sampling": {}}`, `sampling.profile: missing`},
		{"sampling profile not a string", "a.mcp.json", `{` + stdio + `, "sampling": {"profile": 1}}`, `sampling.profile: want a string, got number 1`},
		{"unknown sampling field", "a.mcp.json", `{` + stdio + `, "sampling": {"model": "x"}}`, `sampling.model: unknown field (known: profile)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.file)
			_, err := ParseDefinition(path, []byte(c.data))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to name %s and hold %q", err, path, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q echoes a header value", err)
			}
		})
	}
}

func TestReadDefinitionMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gone.mcp.json")
	if _, err := ReadDefinition(path); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadDefinition of a missing file: %v", err)
	}
}
