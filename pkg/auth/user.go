package auth

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/metadata"
)

// UserHeader is the call metadata (over HTTP, the header) by which a caller
// says which of its users a call acts for: an application holding a
// tenant's token, acting for its own end users, names one, and the runs of
// the call keep their own OAuth connections (pkg/vault) per user. The
// tenant's token vouches for it: agent-server does not authenticate users.
const UserHeader = "x-agentcore-user"

// MaxUserLen bounds a user identity, in bytes.
const MaxUserLen = 128

// CheckUser checks a user identity: 1 to MaxUserLen printable ASCII
// characters, no spaces (an email, a subject claim "auth0|123", a UUID).
func CheckUser(u string) error {
	if u == "" {
		return errors.New("empty")
	}
	if len(u) > MaxUserLen {
		return fmt.Errorf("%d bytes, at most %d", len(u), MaxUserLen)
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("byte %d is %q: only printable ASCII without spaces", i, c)
		}
	}
	return nil
}

// UserOf returns the user identity a call's metadata names (UserHeader),
// "" when it names none; an error (without the header's name) when it is
// malformed or given twice.
func UserOf(ctx context.Context) (string, error) {
	vs := metadata.ValueFromIncomingContext(ctx, UserHeader)
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", fmt.Errorf("given %d times", len(vs))
	}
	if err := CheckUser(vs[0]); err != nil {
		return "", err
	}
	return vs[0], nil
}
