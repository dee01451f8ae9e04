package config

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// toolSetting reports whether s is one of the settings that decide the
// limits of tool calls (the tool_limits keys), or the config file, which
// also holds the plugins section.
func toolSetting(s *Setting) bool {
	return s.Flag == "config" || strings.HasPrefix(s.File, "tool_limits.")
}

// ToolFlags registers on fs the settings that decide the limits of tool
// calls, as agent-server has them: -config, -tool-limits, -tool-memory and
// the other -tool-* limits and maximums. It returns the function that
// loads them once fs is parsed, from the same sources and in the same
// order as Load: the config file (-config or AGENTCORE_CONFIG; its
// tool_limits keys and plugins section, the rest read but unused), then
// the AGENTCORE_TOOL_* variables, then the flags. toolhost shows and runs
// tools with those limits.
func ToolFlags(fs *flag.FlagSet) func(getenv func(string) string) (ToolLimits, error) {
	type given struct {
		s *Setting
		v string
	}
	var flags []given
	all := settings()
	for i := range all {
		s := &all[i]
		if !toolSetting(s) {
			continue
		}
		usage := s.Usage
		if s.Default != "" {
			usage += " (default " + s.Default + ")"
		}
		fs.Func(s.Flag, usage, func(v string) error {
			if err := s.set(defaults(), v); err != nil { // a bad value is a usage error now
				return err
			}
			flags = append(flags, given{s, v})
			return nil
		})
	}
	return func(getenv func(string) string) (ToolLimits, error) {
		c := defaults()
		path := getenv("AGENTCORE_CONFIG")
		for _, f := range flags {
			if f.s.Flag == "config" {
				path = f.v
			}
		}
		if path != "" {
			if err := loadFile(c, path); err != nil {
				return ToolLimits{}, err
			}
		}
		for i := range all {
			s := &all[i]
			if !toolSetting(s) || s.Env == "" || s.Flag == "config" {
				continue
			}
			if v := getenv(s.Env); v != "" {
				s.reset(c)
				if err := s.set(c, v); err != nil {
					return ToolLimits{}, fmt.Errorf("%s: %w", s.Env, err)
				}
			}
		}
		for _, f := range flags {
			if err := f.s.set(c, f.v); err != nil {
				return ToolLimits{}, fmt.Errorf("-%s: %w", f.s.Flag, err)
			}
		}
		var errs []error
		c.checkToolLimits(func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) })
		return c.ToolLimits, errors.Join(errs...)
	}
}
