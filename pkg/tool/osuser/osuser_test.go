package osuser

import (
	"os"
	"strings"
	"testing"
)

func TestCredential(t *testing.T) {
	if c, err := Credential(""); c != nil || err != nil {
		t.Errorf("no plugin user: %v %v", c, err)
	}
	if _, err := Credential("no-such-user-here"); err == nil {
		t.Error("an unknown user was accepted")
	}
	if _, err := Credential("0"); err == nil || !strings.Contains(err.Error(), "root") {
		t.Errorf("root as the plugin user: %v", err)
	}
	c, err := Credential("65534:65533")
	if os.Geteuid() != 0 {
		if err == nil || !strings.Contains(err.Error(), "only root") {
			t.Errorf("not root, another user: %v %v", c, err)
		}
		return
	}
	if err != nil || c.Uid != 65534 || c.Gid != 65533 || c.Groups == nil || len(c.Groups) != 0 {
		t.Errorf("credential %+v, %v; want uid 65534, gid 65533, no supplementary groups", c, err)
	}
}
