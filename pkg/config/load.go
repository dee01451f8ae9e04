package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"
	"gopkg.in/yaml.v3"
)

// Load reads the configuration from args (without the program name), the
// environment (getenv, e.g. os.Getenv) and the config file they name
// (-config or AGENTCORE_CONFIG). A bad setting is an error naming its flag,
// variable or key. -help returns flag.ErrHelp after printing the table.
func Load(args []string, getenv func(string) string, help io.Writer) (*Config, error) {
	// A first pass over the flags finds the config file.
	probe := defaults()
	if err := newFlagSet(probe, io.Discard).Parse(args); err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, suggestFlag(err)
	}
	if probe.Version {
		return probe, nil // -version needs nothing else to be right
	}
	path := probe.file
	if path == "" {
		path = getenv("AGENTCORE_CONFIG")
	}

	c := defaults()
	if path != "" {
		if err := loadFile(c, path); err != nil {
			return nil, err
		}
	}
	for _, s := range settings() {
		if s.Env == "" {
			continue
		}
		if v := getenv(s.Env); v != "" {
			s.reset(c)
			if err := s.set(c, v); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Env, err)
			}
			c.setOrigin(s.Flag, s.Env)
		}
	}
	fs := newFlagSet(c, help)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: every setting is a flag (see -help)", fs.Args())
	}
	if err := c.finish(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

func defaults() *Config {
	c := &Config{}
	for _, s := range settings() {
		if s.Default != "" {
			if err := s.set(c, s.Default); err != nil {
				panic(fmt.Sprintf("config: bad default of -%s: %v", s.Flag, err))
			}
		}
	}
	return c
}

// flagValue is one setting as a flag: the first use of a list flag replaces
// the list from the file or environment, later uses append.
type flagValue struct {
	s    *Setting
	c    *Config
	seen bool
}

func (f *flagValue) String() string {
	if f == nil || f.c == nil {
		return ""
	}
	return f.s.get(f.c)
}

// IsBoolFlag lets a boolean setting be given as -flag, without a value.
func (f *flagValue) IsBoolFlag() bool {
	_, ok := f.s.ptr(&Config{}).(*bool)
	return ok
}

func (f *flagValue) Set(v string) error {
	if !f.seen {
		f.s.reset(f.c)
		f.seen = true
	}
	f.c.setOrigin(f.s.Flag, "-"+f.s.Flag)
	return f.s.set(f.c, v)
}

// setOrigin records where a setting's value came from.
func (c *Config) setOrigin(flag, from string) {
	if c.origin == nil {
		c.origin = map[string]string{}
	}
	c.origin[flag] = from
}

// originOf says where a setting's value came from: its flag, variable or
// config file key; all three when it is not known.
func (c *Config) originOf(flag string) string {
	if o := c.origin[flag]; o != "" {
		return o
	}
	for _, s := range settings() {
		if s.Flag == flag {
			return "-" + s.Flag + " (" + s.Env + ", " + s.File + ")"
		}
	}
	return "-" + flag
}

func newFlagSet(c *Config, help io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agent-server", flag.ContinueOnError)
	fs.SetOutput(help)
	fs.Usage = func() { fmt.Fprint(help, Help()) }
	all := settings()
	for i := range all {
		s := &all[i]
		fs.Var(&flagValue{s: s, c: c}, s.Flag, s.Usage)
	}
	return fs
}

// undefinedFlag starts the flag package's error for a flag it does not know.
const undefinedFlag = "flag provided but not defined: -"

// suggestFlag adds to the flag package's error for an unknown flag the
// known flag closest to it, when one is close enough to be a typo
// (-tool-dri: did you mean -tool-dir?).
func suggestFlag(err error) error {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return err
	}
	name = strings.TrimPrefix(name, "-")
	best, dist := "", 0
	for _, s := range settings() {
		d := levenshtein.ComputeDistance(name, s.Flag)
		if best == "" || d < dist {
			best, dist = s.Flag, d
		}
	}
	if dist > max(2, len(name)/3) {
		return fmt.Errorf("%w (agent-server -help lists every flag)", err)
	}
	return fmt.Errorf("%w; did you mean -%s? (agent-server -help lists every flag)", err, best)
}

// loadFile reads the config file into c.
func loadFile(c *Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	profiles, _ := raw["profiles"].(map[string]any)
	if v, ok := raw["profiles"]; ok && profiles == nil && v != nil {
		return fmt.Errorf("config file %s: profiles: want a map of profile names to profiles", path)
	}
	delete(raw, "profiles")
	plugins, _ := raw["plugins"].(map[string]any)
	if v, ok := raw["plugins"]; ok && plugins == nil && v != nil {
		return fmt.Errorf("config file %s: plugins: want a map of plugin or tool names to limits", path)
	}
	delete(raw, "plugins")
	for name, v := range plugins {
		pl, err := parsePluginLimits(v)
		if err != nil {
			return fmt.Errorf("config file %s: plugins.%s%w", path, name, err)
		}
		if c.ToolLimits.Overrides == nil {
			c.ToolLimits.Overrides = map[string]PluginLimits{}
		}
		c.ToolLimits.Overrides[name] = pl
	}
	for k, v := range flatten("", raw) {
		s := settingByFile(k)
		if s == nil {
			return fmt.Errorf("config file %s: unknown key %q (see the configuration table)", path, k)
		}
		s.reset(c)
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, e := range vals {
			if err := s.set(c, fmt.Sprint(e)); err != nil {
				return fmt.Errorf("config file %s: %s: %w", path, k, err)
			}
		}
		c.setOrigin(s.Flag, "config file key "+k)
	}
	c.Profiles = map[string]*Profile{}
	for name, v := range profiles {
		p, err := parseProfile(name, v)
		if err != nil {
			return fmt.Errorf("config file %s: profiles.%s%w", path, name, err)
		}
		c.Profiles[name] = p
	}
	return nil
}

// parsePluginLimits reads one entry of the config file's plugins section:
// memory (a size), processes, cpu_time (a duration), open_files; 0 or
// "none" lifts the limit.
func parsePluginLimits(v any) (PluginLimits, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return PluginLimits{}, errors.New(": want a map with memory, processes, cpu_time, open_files")
	}
	var pl PluginLimits
	for k, val := range m {
		s := strings.TrimSpace(fmt.Sprint(val))
		none := strings.EqualFold(s, "none")
		var err error
		switch k {
		case "memory":
			var b Bytes
			if !none {
				b, err = ParseBytes(s)
			}
			pl.Memory = &b
		case "processes", "open_files":
			n := 0
			if !none {
				if n, err = strconv.Atoi(s); err == nil && n < 0 {
					err = errors.New("must not be negative")
				}
			}
			if k == "processes" {
				pl.Processes = &n
			} else {
				pl.OpenFiles = &n
			}
		case "cpu_time":
			var d time.Duration
			if !none {
				if d, err = time.ParseDuration(s); err == nil && d < 0 {
					err = errors.New("must not be negative")
				}
			}
			pl.CPUTime = &d
		default:
			err = errors.New("unknown key (want memory, processes, cpu_time, open_files)")
		}
		if err != nil {
			return PluginLimits{}, profileError(k, err)
		}
	}
	return pl, nil
}

// stringList reads a YAML list of strings (or one string).
func stringList(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("want a list of strings")
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, errors.New("want a list of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

// flatten turns nested maps into dotted keys; lists and scalars are leaves.
func flatten(prefix string, m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			for k2, v2 := range flatten(key, sub) {
				out[k2] = v2
			}
			continue
		}
		out[key] = v
	}
	return out
}
