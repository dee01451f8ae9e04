// Package skill scans skill directories and provides the built-in `skill`
// tool.
//
// A skill is a folder holding a SKILL.md: YAML frontmatter with the skill's
// name (equal to the folder's name) and a description saying when to use it,
// then the body, the steps to follow:
//
//	---
//	name: review-pr
//	description: Use when reviewing a pull request.
//	---
//	# Reviewing a PR
//	1. Run the tests…
//
// Only the names and descriptions go into the system prompt (SystemText);
// the model loads one body at a time with the skill tool (ToolSpec, Call).
// With no skills, nothing is added: SystemText is empty and there is no
// tool.
package skill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	"gopkg.in/yaml.v3"
)

// ToolName is the name of the built-in skill tool. It wins over a tool of
// the same name.
const ToolName = "skill"

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Skill is one scanned skill.
type Skill struct {
	// Name is the skill's folder name, equal to its frontmatter name.
	Name string
	// Description says when to use the skill; it goes into the system prompt.
	Description string
	// Body is SKILL.md after the frontmatter; the skill tool returns it.
	Body string
	// Path is the SKILL.md file.
	Path string
}

// Set is a set of skills, ordered by name. A nil *Set is an empty set. A Set
// is not changed after it is made, so it is safe for concurrent use.
type Set struct {
	skills []Skill

	toolOnce sync.Once // the skill tool, made on first use
	tool     *tool.Set
	toolErr  error
}

// Scan reads every dir/<name>/SKILL.md of each directory. A later directory
// wins over an earlier one for a skill of the same name. A folder without a
// SKILL.md is skipped, as are files beside the folders. A missing directory,
// an unreadable SKILL.md, bad frontmatter, a name that differs from its
// folder's or an empty description is an error naming the path.
func Scan(ctx context.Context, dirs ...string) (*Set, error) {
	byName := make(map[string]Skill)
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("skill: scan %s: %w", dir, err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("skill: scan %s: %w", dir, err)
			}
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name(), FileName)
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("skill: %w", err)
			}
			s, err := Parse(e.Name(), data)
			if err != nil {
				return nil, fmt.Errorf("skill: %s: %w", path, err)
			}
			s.Path = path
			byName[s.Name] = s
		}
	}
	return newSet(byName), nil
}

func newSet(byName map[string]Skill) *Set {
	s := &Set{skills: make([]Skill, 0, len(byName))}
	for _, sk := range byName {
		s.skills = append(s.skills, sk)
	}
	slices.SortFunc(s.skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// New returns a set of the given skills; a later skill wins over an earlier
// one of the same name. It does not check them: Parse does.
func New(skills ...Skill) *Set {
	byName := make(map[string]Skill, len(skills))
	for _, sk := range skills {
		byName[sk.Name] = sk
	}
	return newSet(byName)
}

type frontmatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Parse reads a SKILL.md whose folder is named folder.
func Parse(folder string, data []byte) (Skill, error) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\uFEFF"))), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Skill{}, errors.New("no frontmatter: the file must start with a line \"---\"")
	}
	var head, body string
	switch {
	case strings.HasPrefix(rest, "---\n") || rest == "---":
		head, body = "", strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	default:
		i := strings.Index(rest, "\n---\n")
		if i < 0 {
			if !strings.HasSuffix(rest, "\n---") {
				return Skill{}, errors.New("frontmatter is not closed by a line \"---\"")
			}
			i = len(rest) - len("\n---")
			head, body = rest[:i], ""
		} else {
			head, body = rest[:i], rest[i+len("\n---\n"):]
		}
	}
	var fm frontmatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return Skill{}, fmt.Errorf("frontmatter: %w", err)
	}
	switch {
	case fm.Name == "":
		return Skill{}, fmt.Errorf("frontmatter has no name (want name: %s)", folder)
	case fm.Name != folder:
		return Skill{}, fmt.Errorf("name %q does not match its folder %q", fm.Name, folder)
	case strings.TrimSpace(fm.Description) == "":
		return Skill{}, errors.New("frontmatter has no description (say when to use the skill)")
	}
	return Skill{
		Name:        fm.Name,
		Description: strings.TrimSpace(fm.Description),
		Body:        strings.TrimLeft(body, "\n"),
	}, nil
}

// Len returns the number of skills.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.skills)
}

// List returns the skills ordered by name.
func (s *Set) List() []Skill {
	if s == nil {
		return nil
	}
	return slices.Clone(s.skills)
}

// Names returns the skill names, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, s.Len())
	for _, sk := range s.List() {
		names = append(names, sk.Name)
	}
	return names
}

// Get returns the skill named name.
func (s *Set) Get(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	i, ok := slices.BinarySearchFunc(s.skills, name, func(sk Skill, n string) int { return strings.Compare(sk.Name, n) })
	if !ok {
		return Skill{}, false
	}
	return s.skills[i], true
}

// Select returns the skills named, e.g. a session's selection. An unknown
// name is an error listing the available ones.
func (s *Set) Select(names ...string) (*Set, error) {
	byName := make(map[string]Skill, len(names))
	for _, n := range names {
		sk, ok := s.Get(n)
		if !ok {
			return nil, s.unknown(n)
		}
		byName[n] = sk
	}
	return newSet(byName), nil
}

func (s *Set) unknown(name string) error {
	if s.Len() == 0 {
		return fmt.Errorf("unknown skill %q: no skills are available", name)
	}
	return fmt.Errorf("unknown skill %q; available: %s", name, strings.Join(s.Names(), ", "))
}

// SystemHeader opens the skills section of the system prompt.
const SystemHeader = "Available skills. When the task matches a skill's description, call the " +
	ToolName + " tool with its name to load its instructions, then follow them. Load one at a time:"

// SystemText returns what the skills add to the system prompt: a header and
// one line "- name: description" per skill (a multi-line description joined
// into one line). Empty when there are no skills.
func (s *Set) SystemText() string {
	if s.Len() == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(SystemHeader)
	for _, sk := range s.skills {
		b.WriteString("\n- " + sk.Name + ": " + strings.Join(strings.Fields(sk.Description), " "))
	}
	return b.String()
}

// ToolSpec returns the skill tool's definition, with the skill names as the
// enum of its name argument; nil when there are no skills.
func (s *Set) ToolSpec() *pluginv1.ToolSpec {
	if s.Len() == 0 {
		return nil
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{
				"type":        "string",
				"description": "The name of the skill to load.",
				"enum":        s.Names(),
			},
		},
		"required":             []string{"name"},
		"additionalProperties": false,
	}
	b, err := json.Marshal(schema)
	if err != nil { // a map of strings always marshals
		panic(fmt.Sprintf("skill: marshal schema: %v", err))
	}
	return &pluginv1.ToolSpec{
		Name:            ToolName,
		Description:     "Load a skill's instructions by name. The available skills are listed in the system prompt.",
		InputSchemaJson: string(b),
		Hints:           &pluginv1.ToolHints{ReadOnly: true, Idempotent: true},
	}
}

// Tool returns the skill tool (ToolSpec, Call) as an in-process tool set,
// made once per Set, so that its schema is compiled once; nil when there
// are no skills.
func (s *Set) Tool() (*tool.Set, error) {
	if s.Len() == 0 {
		return nil, nil
	}
	s.toolOnce.Do(func() {
		spec := s.ToolSpec()
		s.tool, s.toolErr = tool.InProcess(tool.Spec{
			Name:        spec.GetName(),
			Description: spec.GetDescription(),
			InputSchema: json.RawMessage(spec.GetInputSchemaJson()),
			ReadOnly:    true,
			Idempotent:  true,
			Source:      "builtin:skill",
		}, func(ctx context.Context, input json.RawMessage, _ func(string)) (tool.Result, error) {
			body, err := s.Call(ctx, string(input))
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Output: tool.TextOutput(body)}, nil
		})
	})
	return s.tool, s.toolErr
}

// Call is the skill tool's handler: arguments is the call's JSON
// ({"name": "review-pr"}); it returns that skill's body. An unknown name is
// an error listing the available skills, for the model to read.
func (s *Set) Call(ctx context.Context, arguments string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var args struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "", fmt.Errorf("skill tool: arguments must be {\"name\": \"<skill>\"}: %w", err)
	}
	sk, ok := s.Get(args.Name)
	if !ok {
		return "", fmt.Errorf("skill tool: %w", s.unknown(args.Name))
	}
	return sk.Body, nil
}
