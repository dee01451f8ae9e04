package agentv1_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// sentBefore is every reason's wire string as servers sent it before the
// enum existed: clients compare them, so none may change.
var sentBefore = map[agentv1.ErrorReason]string{
	agentv1.ErrorReason_ERROR_REASON_ABORTED:               "ABORTED",
	agentv1.ErrorReason_ERROR_REASON_AUTH:                  "AUTH",
	agentv1.ErrorReason_ERROR_REASON_LIMIT:                 "LIMIT",
	agentv1.ErrorReason_ERROR_REASON_TIMEOUT:               "TIMEOUT",
	agentv1.ErrorReason_ERROR_REASON_SERVER:                "SERVER",
	agentv1.ErrorReason_ERROR_REASON_NETWORK:               "NETWORK",
	agentv1.ErrorReason_ERROR_REASON_REQUEST:               "REQUEST",
	agentv1.ErrorReason_ERROR_REASON_UNKNOWN:               "UNKNOWN",
	agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT:      "INVALID_ARGUMENT",
	agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED:       "UNAUTHENTICATED",
	agentv1.ErrorReason_ERROR_REASON_ADMIN_REQUIRED:        "ADMIN_REQUIRED",
	agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND:       "AGENT_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_AGENT_EXISTS:          "AGENT_EXISTS",
	agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE:      "AGENT_UNREADABLE",
	agentv1.ErrorReason_ERROR_REASON_AGENT_BUSY:            "AGENT_BUSY",
	agentv1.ErrorReason_ERROR_REASON_RUN_ACTIVE:            "RUN_ACTIVE",
	agentv1.ErrorReason_ERROR_REASON_NO_MODEL:              "NO_MODEL",
	agentv1.ErrorReason_ERROR_REASON_API_KEY_REQUIRED:      "API_KEY_REQUIRED",
	agentv1.ErrorReason_ERROR_REASON_TOOL_GONE:             "TOOL_GONE",
	agentv1.ErrorReason_ERROR_REASON_SKILL_GONE:            "SKILL_GONE",
	agentv1.ErrorReason_ERROR_REASON_NOTHING_TO_COMPACT:    "NOTHING_TO_COMPACT",
	agentv1.ErrorReason_ERROR_REASON_HISTORY_LIMIT:         "HISTORY_LIMIT",
	agentv1.ErrorReason_ERROR_REASON_HISTORY_CHANGED:       "HISTORY_CHANGED",
	agentv1.ErrorReason_ERROR_REASON_HISTORY_CONFLICT:      "HISTORY_CONFLICT",
	agentv1.ErrorReason_ERROR_REASON_SESSION_LIMIT:         "SESSION_LIMIT",
	agentv1.ErrorReason_ERROR_REASON_RUN_LIMIT:             "RUN_LIMIT",
	agentv1.ErrorReason_ERROR_REASON_NOTHING_TO_RESUME:     "NOTHING_TO_RESUME",
	agentv1.ErrorReason_ERROR_REASON_RUN_NOT_FOUND:         "RUN_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_RUN_INTERRUPTED:       "RUN_INTERRUPTED",
	agentv1.ErrorReason_ERROR_REASON_EVENTS_EXPIRED:        "EVENTS_EXPIRED",
	agentv1.ErrorReason_ERROR_REASON_EVENTS_LOST:           "EVENTS_LOST",
	agentv1.ErrorReason_ERROR_REASON_RESUME_LIMIT:          "RESUME_LIMIT",
	agentv1.ErrorReason_ERROR_REASON_PERMISSION_NOT_FOUND:  "PERMISSION_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_PERMISSION_ANSWERED:   "PERMISSION_ANSWERED",
	agentv1.ErrorReason_ERROR_REASON_TOOLS_NOT_LOADED:      "TOOLS_NOT_LOADED",
	agentv1.ErrorReason_ERROR_REASON_TOOL_NOT_FOUND:        "TOOL_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_RELOAD_FAILED:         "RELOAD_FAILED",
	agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN:         "SHUTTING_DOWN",
	agentv1.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE:     "STORE_UNAVAILABLE",
	agentv1.ErrorReason_ERROR_REASON_ROUTE_NOT_FOUND:       "ROUTE_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_METHOD_NOT_ALLOWED:    "METHOD_NOT_ALLOWED",
	agentv1.ErrorReason_ERROR_REASON_BODY_TOO_LARGE:        "BODY_TOO_LARGE",
	agentv1.ErrorReason_ERROR_REASON_ORIGIN_NOT_ALLOWED:    "ORIGIN_NOT_ALLOWED",
	agentv1.ErrorReason_ERROR_REASON_CANCELLED:             "CANCELLED",
	agentv1.ErrorReason_ERROR_REASON_DEADLINE_EXCEEDED:     "DEADLINE_EXCEEDED",
	agentv1.ErrorReason_ERROR_REASON_NOT_FOUND:             "NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_ALREADY_EXISTS:        "ALREADY_EXISTS",
	agentv1.ErrorReason_ERROR_REASON_PERMISSION_DENIED:     "PERMISSION_DENIED",
	agentv1.ErrorReason_ERROR_REASON_RESOURCE_EXHAUSTED:    "RESOURCE_EXHAUSTED",
	agentv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION:   "FAILED_PRECONDITION",
	agentv1.ErrorReason_ERROR_REASON_OUT_OF_RANGE:          "OUT_OF_RANGE",
	agentv1.ErrorReason_ERROR_REASON_UNIMPLEMENTED:         "UNIMPLEMENTED",
	agentv1.ErrorReason_ERROR_REASON_INTERNAL:              "INTERNAL",
	agentv1.ErrorReason_ERROR_REASON_UNAVAILABLE:           "UNAVAILABLE",
	agentv1.ErrorReason_ERROR_REASON_DATA_LOSS:             "DATA_LOSS",
	agentv1.ErrorReason_ERROR_REASON_ELICITATION_NOT_FOUND: "ELICITATION_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_ELICITATION_ANSWERED:  "ELICITATION_ANSWERED",
	agentv1.ErrorReason_ERROR_REASON_CONNECTION_NOT_FOUND:  "CONNECTION_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_MCP_SERVER_NOT_FOUND:  "MCP_SERVER_NOT_FOUND",
	agentv1.ErrorReason_ERROR_REASON_AUTHORIZATION_FAILED:  "AUTHORIZATION_FAILED",
	agentv1.ErrorReason_ERROR_REASON_VAULT_UNAVAILABLE:     "VAULT_UNAVAILABLE",
}

func TestErrorReasonWire(t *testing.T) {
	for n := range agentv1.ErrorReason_name {
		r := agentv1.ErrorReason(n)
		if r == agentv1.ErrorReason_ERROR_REASON_UNSPECIFIED {
			continue
		}
		want, ok := sentBefore[r]
		if !ok {
			t.Errorf("%v is not in sentBefore: add its wire string there", r)
			continue
		}
		if got := r.Wire(); got != want {
			t.Errorf("%v.Wire() = %q, want %q", r, got, want)
		}
		if got := agentv1.ErrorReasonOf(want); got != r {
			t.Errorf("ErrorReasonOf(%q) = %v, want %v", want, got, r)
		}
	}
	for r, s := range sentBefore {
		if _, ok := agentv1.ErrorReason_name[int32(r)]; !ok {
			t.Errorf("the enum lost %q (%d): a client compares it", s, r)
		}
	}
	for _, s := range []string{"", "UNSPECIFIED", "ERROR_REASON_AGENT_BUSY", "agent_busy", "SOMETHING_NEW"} {
		if got := agentv1.ErrorReasonOf(s); got != agentv1.ErrorReason_ERROR_REASON_UNSPECIFIED {
			t.Errorf("ErrorReasonOf(%q) = %v, want UNSPECIFIED", s, got)
		}
	}
	if got := agentv1.ErrorReason(999).Wire(); got != "" {
		t.Errorf("an unknown number's wire string is %q, want empty", got)
	}
}

// TestReasonsComeFromTheEnum fails when code outside the stores sets the
// reason of a google.rpc.ErrorInfo or a RunError to anything but an
// ErrorReason's Wire() or a reason read back from another status
// (GetReason()): a bare string would be a reason the enum may lack.
func TestReasonsComeFromTheEnum(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	for _, dir := range []string{"cmd", "pkg", "internal", "sdk"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "store" || d.Name() == "testdata" || d.Name() == "node_modules"):
				return filepath.SkipDir // stores keep whatever reason they are given
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			checkReasons(t, path)
			return nil
		})
		if err != nil && !strings.Contains(err.Error(), "no such file") {
			t.Fatal(err)
		}
	}
}

// checkReasons reports each Reason field of an ErrorInfo or RunError
// literal in the file at path whose value is not a Wire() or GetReason() call.
func checkReasons(t *testing.T, path string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || !reasonHolder(lit.Type) {
			return true
		}
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "Reason" {
				continue
			}
			if !fromEnum(kv.Value) {
				t.Errorf("%s: a reason that is not an ErrorReason's Wire(): use agentv1.ErrorReason (proto/agentcore/v1/errors.proto)", fset.Position(kv.Pos()))
			}
		}
		return true
	})
}

// reasonHolder reports whether a literal's type is errdetails.ErrorInfo or agentv1.RunError.
func reasonHolder(typ ast.Expr) bool {
	var name string
	switch x := typ.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	}
	return name == "ErrorInfo" || name == "RunError"
}

// fromEnum reports whether v is a call of a method named Wire or GetReason.
func fromEnum(v ast.Expr) bool {
	call, ok := v.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Wire" || sel.Sel.Name == "GetReason")
}
