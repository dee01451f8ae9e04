package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent/secret"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/tokens"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Options configure a new Session. LLM is required; the rest is optional.
type Options struct {
	// ID is the session's id, [A-Za-z0-9._-]{1,128}; empty means a random one.
	ID string
	// Config is the model configuration, stored as given (secrets included).
	// It is checked here, but a missing base URL or model is only an error
	// when a model is asked (Send, Compact).
	Config *agentv1.AgentConfig
	// History is the initial history; it is checked (history.Validate).
	History []*agentv1.Message
	// Tools are the tools the session may use; nil means none.
	Tools *tool.Set
	// Skills are the skills the session may use; nil or empty means none
	// (nothing is added to the system prompt, no skill tool).
	Skills *skill.Set

	// LLM asks the models. Share one Client across sessions.
	LLM *llm.Client
	// Encoders count tokens. Share one set across sessions: an encoder costs
	// tens of megabytes. Nil means the session builds its own when it first
	// needs one.
	Encoders *tokens.Encoders
	// Model, when set, is a caller's eino chat model asked instead of one
	// built from the config (then base URL and model are not required). It
	// also compacts unless config.compact names a base URL or a model.
	Model model.ToolCallingChatModel
	// ExpandProfile, when set, fills in a config that names a profile
	// (config.profile or config.compact.profile) before it is resolved, e.g.
	// from the server's model profiles, and may fill in a default profile
	// for one that names none; it sees every config the session resolves. It returns a new config, or one it
	// returned before for the same config (the session never changes a
	// config it was given or got back); its error may be a
	// *ValidationError. Without it, a profile name is invalid.
	ExpandProfile func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error)
	// Logger receives the session's logs; nil discards them.
	Logger hclog.Logger
	// MaxToolOutput, when positive, is the characters of text a tool result
	// keeps when the config sets no max_tool_output, and the most it may set
	// (a larger value is lowered to it).
	MaxToolOutput int
	// MaxToolResultBytes, when positive, caps what one tool result adds to
	// the history, media included (tool.Options.MaxBytes).
	MaxToolResultBytes int
	// MaxLiveOutput, when positive, is the bytes of live output
	// (ToolOutputEvents) one tool call emits when the config sets no
	// max_live_output, and the most it may set; past it, one
	// ToolOutputCappedEvent says what was left out.
	MaxLiveOutput int64
	// LiveOutputStop stops a tool call whose live output goes over its cap,
	// instead of letting it run on unseen.
	LiveOutputStop bool
	// RedactToolOutput, when set, cleans tool results and their live output
	// before they become events, history and so the next model request
	// (tool.Options.Redact), e.g. of the secrets the caller holds.
	RedactToolOutput func(string) string
	// Journal, when set, makes the session durable (see Journal).
	Journal Journal
	// Usage is the usage totals to start from, e.g. those of a stored agent.
	Usage *agentv1.Usage
	// Observer is told what the session's runs do (traces, metrics, logs);
	// nil means NopObserver. Share one across sessions.
	Observer Observer
	// Price, when set, returns the price of a model's tokens (the config's
	// profile name and model), for the cost a budget counts; false: free.
	Price func(profile, model string) (Price, bool)
}

// Session is an agent: agent-core's Agent.create result. It holds an id,
// a config, a history, the tools and skills it may use and its usage totals,
// and runs one send (or compaction) at a time. It is safe for concurrent use;
// an idle session holds no goroutine and no process.
type Session struct {
	id      string
	opts    Options // shared parts only: LLM, Encoders, Model, ExpandProfile, Logger, Observer, limits, RedactToolOutput, Journal
	created time.Time

	mu       sync.Mutex
	config   *agentv1.AgentConfig
	updated  time.Time
	history  []*agentv1.Message
	tools    *tool.Set
	skills   *skill.Set
	usage    *agentv1.Usage
	counter  *tokens.Counter
	encoders *tokens.Encoders // own set when Options.Encoders is nil
	// historyBytes is the history's share of Footprint, kept as it changes.
	historyBytes int64
	slot         slot
}

// New returns an idle session. An invalid id, config or history is a
// *ValidationError naming the fields ("agent_id", "config.…",
// "history[i]…").
func New(opts Options) (*Session, error) {
	var problems violations
	if opts.LLM == nil {
		problems.add("llm", "a model client is required")
	}
	if opts.ID == "" {
		opts.ID = newID("agent_")
	} else if !validID(opts.ID) {
		problems.add("agent_id", "must be 1 to 128 letters, digits, '.', '_' or '-'")
	}
	s := &Session{id: opts.ID, created: time.Now(), config: &agentv1.AgentConfig{}}
	if opts.Config != nil {
		s.config = proto.Clone(opts.Config).(*agentv1.AgentConfig)
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Observer == nil {
		opts.Observer = NopObserver{}
	}
	s.opts = Options{LLM: opts.LLM, Encoders: opts.Encoders, Model: opts.Model, ExpandProfile: opts.ExpandProfile, Logger: opts.Logger, Observer: opts.Observer,
		MaxToolOutput: opts.MaxToolOutput, MaxToolResultBytes: opts.MaxToolResultBytes, MaxLiveOutput: opts.MaxLiveOutput, LiveOutputStop: opts.LiveOutputStop,
		RedactToolOutput: opts.RedactToolOutput, Journal: opts.Journal, Price: opts.Price}
	if _, err := s.resolve(s.config, false); err != nil {
		if err := problems.addErr(err, "history"); err != nil {
			return nil, err
		}
	}
	if err := problems.addErr(history.Validate(opts.History), "history"); err != nil {
		return nil, err
	}
	if err := problems.err(); err != nil {
		return nil, err
	}
	s.updated = s.created
	s.history = append([]*agentv1.Message(nil), opts.History...)
	s.historyBytes = historyFootprint(s.history)
	s.tools, s.skills = opts.Tools, opts.Skills
	s.usage = cloneUsage(opts.Usage)
	return s, nil
}

func validID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// newID returns prefix and 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Config returns a copy of the stored config, secrets included (see Redact).
func (s *Session) Config() *agentv1.AgentConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.config).(*agentv1.AgentConfig)
}

// StoredConfig returns the stored config itself, not a copy, for reading:
// it must not be changed. SetConfig replaces it whole, so it stays as it
// is, and the same pointer stands for the same config.
func (s *Session) StoredConfig() *agentv1.AgentConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.config
}

// HistoryLength returns how many messages the history holds.
func (s *Session) HistoryLength() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.history)
}

// SetConfig replaces the stored config after checking it (a
// *ValidationError names bad fields). A running send keeps the config it
// started with. To change some fields, MergeConfig first.
func (s *Session) SetConfig(c *agentv1.AgentConfig) error {
	if c == nil {
		c = &agentv1.AgentConfig{}
	}
	if _, err := s.resolve(c, false); err != nil {
		return err
	}
	c = proto.Clone(c).(*agentv1.AgentConfig)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.config = c
	s.updated = time.Now()
	return nil
}

// History returns a copy of the history. Messages are shared and must not
// be changed (see package history).
func (s *Session) History() []*agentv1.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*agentv1.Message(nil), s.history...)
}

// SetHistory replaces the history, e.g. restoring it from a database. It
// fails with ErrBusy while a run is active or waiting, and with a
// *ValidationError ("history[i]…") when h is malformed.
func (s *Session) SetHistory(h []*agentv1.Message) error {
	var problems violations
	if err := problems.addErr(history.Validate(h), "history"); err != nil {
		return err
	}
	if err := problems.err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slot.busy() {
		return ErrBusy
	}
	s.setHistoryLocked(h)
	return nil
}

func (s *Session) setHistoryLocked(h []*agentv1.Message) {
	s.history = append([]*agentv1.Message(nil), h...)
	s.historyBytes = historyFootprint(s.history)
	s.updated = time.Now()
	if s.counter != nil {
		s.counter.Retain(s.history)
	}
}

// Tools returns the tools the session may use.
func (s *Session) Tools() *tool.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// SetTools replaces the tools the session may use, from its next send on.
func (s *Session) SetTools(t *tool.Set) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = t
	s.updated = time.Now()
}

// Skills returns the skills the session may use.
func (s *Session) Skills() *skill.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skills
}

// SetSkills replaces the skills the session may use, from its next send on.
func (s *Session) SetSkills(sk *skill.Set) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skills = sk
	s.updated = time.Now()
}

// Usage returns the usage summed over every send and compaction so far.
func (s *Session) Usage() *agentv1.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.usage).(*agentv1.Usage)
}

// State is a snapshot of a session, what GetAgent and ListAgents show.
type State struct {
	ID string
	// Config is the stored config without secrets (Redact).
	Config *agentv1.AgentConfig
	// HasAPIKey says whether the config holds an API key (main or compaction).
	HasAPIKey bool
	// Running is true while a send or compaction runs; RunID is its id.
	Running bool
	RunID   string
	// Waiting counts sends waiting for the running one to end.
	Waiting       int
	HistoryLength int
	// Usage is summed over every send and compaction.
	Usage *agentv1.Usage
	// Tools and Skills are the names the session may use, sorted; the skill
	// tool is not listed among the tools.
	Tools, Skills []string
	// Created and Updated are when the session was made and last changed
	// (config, history, tools or skills replaced; not by a run).
	Created, Updated time.Time
}

// State returns a snapshot of the session.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{
		ID:            s.id,
		Config:        secret.Redact(s.config),
		HasAPIKey:     hasAPIKey(s.config),
		HistoryLength: len(s.history),
		Usage:         proto.Clone(s.usage).(*agentv1.Usage),
		Tools:         s.tools.Names(),
		Skills:        s.skills.Names(),
		Created:       s.created,
		Updated:       s.updated,
		Waiting:       s.slot.waiting(),
	}
	if r := s.slot.active; r != nil {
		st.Running, st.RunID = true, r.id
	}
	return st
}

// Stop stops the active run, if any, and returns true once it has fully
// stopped: its tool processes killed, its history written. It returns false
// when the session was idle. Sends waiting in the queue are not affected.
// The error is ctx's when ctx ends first.
func (s *Session) Stop(ctx context.Context) (bool, error) {
	s.mu.Lock()
	r := s.slot.active
	s.mu.Unlock()
	return stop(ctx, r, ErrStopped)
}

// Close stops the active run (as Stop does), fails every waiting send with
// an aborted error wrapping ErrClosed, and makes later sends and compactions
// fail the same way. It returns whether a run was stopped.
func (s *Session) Close(ctx context.Context) (bool, error) {
	s.mu.Lock()
	r := s.slot.close()
	s.mu.Unlock()
	return stop(ctx, r, ErrClosed)
}

// stop cancels run r (if any) with cause and waits until it has ended.
func stop(ctx context.Context, r *run, cause error) (bool, error) {
	if r == nil {
		return false, nil
	}
	r.cancel(cause)
	select {
	case <-r.done:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Load replaces the history and usage totals with a stored state, e.g.
// after another process changed the agent. It fails with ErrBusy while a
// run is active or waiting.
func (s *Session) Load(st Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slot.busy() {
		return ErrBusy
	}
	s.setHistoryLocked(st.History)
	s.usage = cloneUsage(st.Usage)
	return nil
}

// snapshot returns the history for reading during a run: the engine only
// appends, and a slice clipped to its length never sees later appends.
func (s *Session) snapshot() []*agentv1.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history[:len(s.history):len(s.history)]
}

func addUsage(dst, u *agentv1.Usage) {
	dst.InputTokens += u.GetInputTokens()
	dst.OutputTokens += u.GetOutputTokens()
	dst.TotalTokens += u.GetTotalTokens()
	dst.CacheReadTokens += u.GetCacheReadTokens()
	dst.CacheWriteTokens += u.GetCacheWriteTokens()
	dst.ReasoningTokens += u.GetReasoningTokens()
}

// tokenCounter returns the session's counter for model's encoding, made on
// first use (or when the model moves to another encoding).
func (s *Session) tokenCounter(modelName string) (*tokens.Counter, error) {
	enc := tokens.EncodingForModel(modelName)
	s.mu.Lock()
	if c := s.counter; c != nil && c.Encoder().Encoding() == enc {
		s.mu.Unlock()
		return c, nil
	}
	set := s.opts.Encoders
	if set == nil {
		if s.encoders == nil {
			s.encoders = tokens.NewEncoders()
		}
		set = s.encoders
	}
	s.mu.Unlock()
	e, err := set.Get(enc) // slow the first time: outside the lock
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.counter; c != nil && c.Encoder().Encoding() == enc {
		return c, nil
	}
	s.counter = tokens.NewCounter(e)
	return s.counter, nil
}
