package auth

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestUserOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		md   metadata.MD
		want string
		err  string
	}{
		{"none", metadata.MD{}, "", ""},
		{"email", metadata.Pairs(UserHeader, "alice@example.com"), "alice@example.com", ""},
		{"subject claim", metadata.Pairs(UserHeader, "auth0|5f7c8ec7c33c6c004bbafe82"), "auth0|5f7c8ec7c33c6c004bbafe82", ""},
		{"longest", metadata.Pairs(UserHeader, strings.Repeat("u", MaxUserLen)), strings.Repeat("u", MaxUserLen), ""},
		{"too long", metadata.Pairs(UserHeader, strings.Repeat("u", MaxUserLen+1)), "", "at most 128"},
		{"empty", metadata.Pairs(UserHeader, ""), "", "empty"},
		{"space", metadata.Pairs(UserHeader, "alice smith"), "", "byte 5"},
		{"newline", metadata.Pairs(UserHeader, "alice\nadmin"), "", "byte 5"},
		{"not ASCII", metadata.Pairs(UserHeader, "zoë"), "", "printable ASCII"},
		{"twice", metadata.Pairs(UserHeader, "a", UserHeader, "b"), "", "given 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UserOf(metadata.NewIncomingContext(context.Background(), tc.md))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("UserOf = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("UserOf = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
