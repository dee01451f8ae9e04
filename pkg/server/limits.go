package server

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// minReceiveBytes is the least the host accepts in one message from a
// plugin: room for a result at the cap, which sdk/tool cuts to fit, and
// more for plugins that do not.
const minReceiveBytes = 64 << 20

// LimitPolicy turns the tool limit settings into a tool host's policy.
func LimitPolicy(t config.ToolLimits) tool.LimitPolicy {
	p := tool.LimitPolicy{
		Default: limits.Limits{Memory: uint64(t.Memory), Processes: uint32(t.Processes), CPUTime: t.CPUTime, OpenFiles: uint32(t.OpenFiles)},
		Max:     limits.Limits{Memory: uint64(t.MemoryMax), Processes: uint32(t.ProcessesMax), CPUTime: t.CPUTimeMax, OpenFiles: uint32(t.OpenFilesMax)},
	}
	if len(t.Overrides) > 0 {
		p.Overrides = make(map[string]tool.LimitOverride, len(t.Overrides))
	}
	for name, o := range t.Overrides {
		var lo tool.LimitOverride
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

// ToolLimitsOf returns limits in the public API's form; nil for none.
func ToolLimitsOf(l limits.Limits) *agentv1.ToolLimits {
	if l.IsZero() {
		return nil
	}
	out := &agentv1.ToolLimits{MemoryBytes: l.Memory, MaxProcesses: l.Processes, MaxOpenFiles: l.OpenFiles}
	if l.CPUTime > 0 {
		out.CpuTime = durationpb.New(l.CPUTime.Round(time.Millisecond))
	}
	return out
}
