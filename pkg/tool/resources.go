package tool

import (
	"path/filepath"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// LimitPolicy turns what a tool asks for (its ToolSpec.limits) into the
// limits its calls get: a limit the tool does not ask for is Default's; one
// it asks for is capped by Max; an override for the tool or its plugin wins
// over both. A zero field of Default or Max means no limit, no cap.
type LimitPolicy struct {
	// Default holds the limits of tools that ask for none.
	Default limits.Limits
	// Max caps what a tool may ask for.
	Max limits.Limits
	// Overrides are set by the operator, keyed by a tool's name or its
	// plugin's file name (e.g. "shell", "everything.mcp.json"); the tool's
	// name wins over its plugin's.
	Overrides map[string]LimitOverride
}

// LimitOverride sets some limits of a tool whatever it asks for; a nil
// field is not overridden, a pointer to zero means no limit.
type LimitOverride struct {
	Memory    *uint64
	Processes *uint32
	CPUTime   *time.Duration
	OpenFiles *uint32
}

// apply returns the limits of tool (empty: the plugin's describe process)
// of plugin, which asked for asked.
func (p LimitPolicy) apply(plugin, tool string, asked limits.Limits) limits.Limits {
	capped := func(ask, def, max uint64) uint64 {
		if ask == 0 {
			return def
		}
		if max > 0 && ask > max {
			return max
		}
		return ask
	}
	l := limits.Limits{
		Memory:    capped(asked.Memory, p.Default.Memory, p.Max.Memory),
		Processes: uint32(capped(uint64(asked.Processes), uint64(p.Default.Processes), uint64(p.Max.Processes))),
		CPUTime:   time.Duration(capped(uint64(max(asked.CPUTime, 0)), uint64(p.Default.CPUTime), uint64(p.Max.CPUTime))),
		OpenFiles: uint32(capped(uint64(asked.OpenFiles), uint64(p.Default.OpenFiles), uint64(p.Max.OpenFiles))),
	}
	for _, key := range []string{plugin, tool} {
		o, ok := p.Overrides[key]
		if !ok || key == "" {
			continue
		}
		if o.Memory != nil {
			l.Memory = *o.Memory
		}
		if o.Processes != nil {
			l.Processes = *o.Processes
		}
		if o.CPUTime != nil {
			l.CPUTime = *o.CPUTime
		}
		if o.OpenFiles != nil {
			l.OpenFiles = *o.OpenFiles
		}
	}
	return l
}

// pluginName is how LimitPolicy.Overrides names a plugin: the file name of
// its definition (an MCP server's) or of its executable.
func (c Command) pluginName() string {
	if len(c.Files) > 0 {
		return filepath.Base(c.Files[0])
	}
	return filepath.Base(c.Path)
}

// askedLimits reads a tool's ToolLimits.
func askedLimits(l *pluginv1.ToolLimits) limits.Limits {
	if l == nil {
		return limits.Limits{}
	}
	out := limits.Limits{Memory: l.GetMemoryBytes(), Processes: l.GetMaxProcesses(), OpenFiles: l.GetMaxOpenFiles()}
	if d := l.GetCpuTime(); d != nil {
		out.CPUTime = durationOf(d)
	}
	return out
}

// limitsFor returns the limits of a plugin's tool under the host's policy
// and mechanism (what the mechanism, or the host's privileges, cannot
// enforce left out).
func (h *Host) limitsFor(cmd Command, tool string, asked limits.Limits) limits.Limits {
	if h.cfg.Limits == nil {
		return limits.Limits{}
	}
	l := h.cfg.Limits.Enforced(h.cfg.LimitPolicy.apply(cmd.pluginName(), tool, asked))
	if h.noRlimits {
		l.OpenFiles = 0
		if h.cfg.Limits.Mechanism() == limits.Rlimit {
			l.Memory = 0
		}
	}
	return l
}

// LimitPolicyOf turns the tool limit settings (-tool-* flags, the config
// file's plugins section) into a host's policy.
func LimitPolicyOf(t config.ToolLimits) LimitPolicy {
	p := LimitPolicy{
		Default: limits.Limits{Memory: uint64(t.Memory), Processes: uint32(t.Processes), CPUTime: t.CPUTime, OpenFiles: uint32(t.OpenFiles)},
		Max:     limits.Limits{Memory: uint64(t.MemoryMax), Processes: uint32(t.ProcessesMax), CPUTime: t.CPUTimeMax, OpenFiles: uint32(t.OpenFilesMax)},
	}
	if len(t.Overrides) > 0 {
		p.Overrides = make(map[string]LimitOverride, len(t.Overrides))
	}
	for name, o := range t.Overrides {
		var lo LimitOverride
		if o.Memory != nil {
			v := uint64(*o.Memory)
			lo.Memory = &v
		}
		if o.Processes != nil {
			v := uint32(*o.Processes)
			lo.Processes = &v
		}
		if o.CPUTime != nil {
			v := *o.CPUTime
			lo.CPUTime = &v
		}
		if o.OpenFiles != nil {
			v := uint32(*o.OpenFiles)
			lo.OpenFiles = &v
		}
		p.Overrides[name] = lo
	}
	return p
}

// LimitsProto returns limits in the public API's form; nil for none.
func LimitsProto(l limits.Limits) *agentv1.ToolLimits {
	if l.IsZero() {
		return nil
	}
	out := &agentv1.ToolLimits{MemoryBytes: l.Memory, MaxProcesses: l.Processes, MaxOpenFiles: l.OpenFiles}
	if l.CPUTime > 0 {
		out.CpuTime = durationpb.New(l.CPUTime.Round(time.Millisecond))
	}
	return out
}
