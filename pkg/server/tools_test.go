package server

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/interceptor"
	"github.com/agentcore/agentcore/pkg/skill"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestListToolsIsEncodedOncePerCatalog: ListTools answers with one
// response per catalog, which the codec sends from an encoding made once,
// the proto encoding of that response; a reload makes a new one and lets
// the old encoding go.
func TestListToolsIsEncodedOncePerCatalog(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "greet")
	cfg, err := config.Load([]string{"-store", "memory", "-tool-dir", t.TempDir(), "-skill-dir", dir, "-model-base-url", "http://127.0.0.1:9/v1", "-model", "m"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	if err := srv.LoadTools(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := srv.ListTools(ctx, &agentv1.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := srv.ListTools(ctx, &agentv1.ListToolsRequest{})
	if a != b || len(a.GetSkills()) != 1 {
		t.Fatalf("two calls, two responses (%p, %p), or no skill: %v", a, b, a)
	}
	codec := interceptor.NewCodec(srv.secrets, srv.frozen)
	got, err := codec.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := proto.Marshal(a)
	if string(got.Materialize()) != string(want) {
		t.Error("the kept encoding is not the response's")
	}
	if _, ok := srv.frozen.Encoding(a); !ok {
		t.Error("the response's encoding is not kept")
	}
	if err := srv.LoadTools(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.frozen.Encoding(a); ok {
		t.Error("the old catalog's encoding is kept after a reload")
	}
	if c, _ := srv.ListTools(ctx, &agentv1.ListToolsRequest{}); c == a {
		t.Error("a reload kept the old response")
	}
}

// writeSkill makes dir/name/SKILL.md.
func writeSkill(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: Use to test.\n---\nbody\n"
	if err := os.WriteFile(filepath.Join(dir, name, skill.FileName), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
