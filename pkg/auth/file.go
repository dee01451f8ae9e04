package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"gopkg.in/yaml.v3"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// MinPlainToken is the shortest plain token a tokens file may hold; a
// hashed one (sha256:HEX) cannot be checked.
const MinPlainToken = 16

// hashPrefix marks a token stored as the hex SHA-256 of the token.
const hashPrefix = "sha256:"

// TenantSpec is one tenant of a tokens file with its credentials.
type TenantSpec struct {
	Tenant Tenant
	// TokenDigests are the SHA-256 digests of its bearer tokens.
	TokenDigests [][sha256.Size]byte
	// Subjects are client certificate subjects (as Go prints them, RFC 2253
	// order: "CN=alice,O=Acme") that name the tenant.
	Subjects []string
	// SANs are client certificate subject alternative names (DNS name,
	// e-mail, IP address or URI) that name the tenant.
	SANs []string
}

func (s TenantSpec) certKeys() []string {
	keys := make([]string, 0, len(s.Subjects)+len(s.SANs))
	for _, v := range s.Subjects {
		keys = append(keys, "subject:"+v)
	}
	for _, v := range s.SANs {
		keys = append(keys, "san:"+v)
	}
	return keys
}

// fileTenant is a tenant as the file writes it.
type fileTenant struct {
	Tokens []string `yaml:"tokens"`
	Admin  bool     `yaml:"admin"`
	Limits struct {
		Agents         int         `yaml:"agents"`
		ConcurrentRuns int         `yaml:"concurrent_runs"`
		Budget         *fileBudget `yaml:"budget"`
	} `yaml:"limits"`
	Profiles    *[]string `yaml:"profiles"`
	ClientCerts struct {
		Subjects []string `yaml:"subjects"`
		SANs     []string `yaml:"sans"`
	} `yaml:"client_certs"`
}

// fileBudget is a tenant's default budget of run trees in a tokens file.
type fileBudget struct {
	InputTokens   *int64         `yaml:"input_tokens"`
	OutputTokens  *int64         `yaml:"output_tokens"`
	ModelRequests *int64         `yaml:"model_requests"`
	ToolCalls     *int64         `yaml:"tool_calls"`
	WallTime      *time.Duration `yaml:"wall_time"`
	Cost          *float64       `yaml:"cost"`
}

// proto is the budget as the API has it; its problem, if any.
func (b *fileBudget) proto() (*agentv1.Budget, error) {
	out := &agentv1.Budget{InputTokens: b.InputTokens, OutputTokens: b.OutputTokens, ModelRequests: b.ModelRequests, ToolCalls: b.ToolCalls, Cost: b.Cost}
	for _, n := range []*int64{b.InputTokens, b.OutputTokens, b.ModelRequests, b.ToolCalls} {
		if n != nil && *n < 0 {
			return nil, errors.New("a limit must not be negative")
		}
	}
	if b.Cost != nil && *b.Cost < 0 {
		return nil, errors.New("cost must not be negative")
	}
	if b.WallTime != nil {
		if *b.WallTime <= 0 {
			return nil, errors.New("wall_time must be a positive duration such as 10m")
		}
		out.WallTime = durationpb.New(*b.WallTime)
	}
	return out, nil
}

// ReadTenants reads a tokens file (see ParseTenants).
func ReadTenants(path string, profiles []string) ([]TenantSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	specs, err := ParseTenants(b, profiles)
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return specs, nil
}

// ParseTenants reads a tokens file, YAML or JSON, strictly (an unknown key
// is an error naming it):
//
//	tenants:
//	  alice:
//	    admin: true                      # may call ReloadTools
//	    tokens: ["sha256:<hex of the SHA-256 of the token>", "or-a-plain-token-of-16+-chars"]
//	    limits: {agents: 100, concurrent_runs: 4}   # 0 or absent: the server's limits only
//	    # limits.budget: the budget of run trees whose send and agent give none
//	    # (input_tokens, output_tokens, model_requests, tool_calls, wall_time, cost)
//	    profiles: [main, cheap]          # absent: every profile; []: none
//	    client_certs:                    # mutual TLS: a verified certificate naming the tenant
//	      subjects: ["CN=alice,O=Acme"]
//	      sans: ["alice.acme.internal", "spiffe://acme/alice"]
//
// profiles, when not nil, are the profiles a tenant may name. Tenants come
// back sorted by id.
func ParseTenants(data []byte, profiles []string) ([]TenantSpec, error) {
	var doc struct {
		Tenants map[string]*fileTenant `yaml:"tenants"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	ids := make([]string, 0, len(doc.Tenants))
	for id := range doc.Tenants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	known := map[string]bool{}
	for _, p := range profiles {
		known[p] = true
	}
	var specs []TenantSpec
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, id := range ids {
		ft := doc.Tenants[id]
		if !validID(id) {
			bad("tenants.%q: a tenant id is 1 to 128 letters, digits, '.', '_', '-' or '@'", id)
			continue
		}
		if ft == nil {
			bad("tenants.%s: no tokens and no client certificates: it could never be used", id)
			continue
		}
		s := TenantSpec{
			Tenant:   Tenant{ID: id, Admin: ft.Admin, MaxAgents: ft.Limits.Agents, MaxConcurrentRuns: ft.Limits.ConcurrentRuns},
			Subjects: ft.ClientCerts.Subjects, SANs: ft.ClientCerts.SANs,
		}
		if ft.Limits.Agents < 0 || ft.Limits.ConcurrentRuns < 0 {
			bad("tenants.%s.limits: must not be negative", id)
		}
		if ft.Limits.Budget != nil {
			b, err := ft.Limits.Budget.proto()
			if err != nil {
				bad("tenants.%s.limits.budget: %w", id, err)
			}
			s.Tenant.Budget = b
		}
		if ft.Profiles != nil {
			s.Tenant.Profiles = append([]string{}, (*ft.Profiles)...)
			for i, p := range s.Tenant.Profiles {
				if profiles != nil && !known[p] {
					bad("tenants.%s.profiles[%d]: no profile %q on this server", id, i, p)
				}
			}
		}
		for i, tok := range ft.Tokens {
			d, err := tokenDigest(tok)
			if err != nil {
				bad("tenants.%s.tokens[%d]: %w", id, i, err)
				continue
			}
			s.TokenDigests = append(s.TokenDigests, d)
		}
		for i, v := range append(append([]string{}, s.Subjects...), s.SANs...) {
			if strings.TrimSpace(v) == "" {
				bad("tenants.%s.client_certs: entry %d is empty", id, i)
			}
		}
		if len(s.TokenDigests) == 0 && len(s.Subjects) == 0 && len(s.SANs) == 0 && len(ft.Tokens) == 0 {
			bad("tenants.%s: no tokens and no client certificates: it could never be used", id)
		}
		specs = append(specs, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return specs, nil
}

// tokenDigest reads "sha256:HEX" or a plain token into its digest.
func tokenDigest(tok string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	if h, ok := strings.CutPrefix(tok, hashPrefix); ok {
		b, err := hex.DecodeString(strings.TrimSpace(h))
		if err != nil || len(b) != sha256.Size {
			return d, errors.New("sha256: wants 64 hex digits (printf %s TOKEN | sha256sum)")
		}
		copy(d[:], b)
		return d, nil
	}
	if len(tok) < MinPlainToken {
		return d, fmt.Errorf("a plain token needs at least %d characters (better: store sha256:HEX)", MinPlainToken)
	}
	return sha256.Sum256([]byte(tok)), nil
}

// HashToken returns the form of a token to put in a tokens file: "sha256:" and the hex digest.
func HashToken(token string) string {
	d := sha256.Sum256([]byte(token))
	return hashPrefix + hex.EncodeToString(d[:])
}

func validID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '@':
		default:
			return false
		}
	}
	return true
}
