package mcp

import (
	"fmt"
	"slices"
	"strings"
)

// Sampling is a definition's "sampling" block: which model answers the
// server's sampling requests (sampling/createMessage) instead of the
// calling run's.
type Sampling struct {
	// Profile names one of agent-server's model profiles.
	Profile string
}

// samplingFrom reads and checks a "sampling" block.
func samplingFrom(f fields) (*Sampling, error) {
	if err := f.only([]string{"profile"}, ""); err != nil {
		return nil, err
	}
	p, err := f.str("profile")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p) == "" {
		return nil, badField(f.name("profile"), "missing (the name of one of agent-server's model profiles)")
	}
	return &Sampling{Profile: p}, nil
}

// checkProfile refuses a sampling block naming a profile not among
// profiles (nil: not checked).
func (d *Definition) checkProfile(profiles []string) error {
	if d.Sampling == nil || profiles == nil || slices.Contains(profiles, d.Sampling.Profile) {
		return nil
	}
	return fmt.Errorf("mcp definition %s: sampling.profile: no profile %q on this server (it has %s)",
		d.Path, d.Sampling.Profile, strings.Join(profiles, ", "))
}

// SamplingProfile returns the profile that answers the sampling requests
// of the tools of source (a tool's Source: "mcp:" and its definition's
// path): the definition's sampling profile, "" when it names none or
// source is not an MCP definition's. The file is read at each call: a
// changed definition applies at once, as its rescan will.
func SamplingProfile(source string) (string, error) {
	path, ok := strings.CutPrefix(source, sourcePrefix)
	if !ok {
		return "", nil
	}
	def, err := ReadDefinition(path)
	if err != nil {
		return "", err
	}
	if def.Sampling == nil {
		return "", nil
	}
	return def.Sampling.Profile, nil
}
