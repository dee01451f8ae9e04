package sockdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

func TestStaleSocketDirectories(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, marker string) string {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(dir, "plugin-dir1"), 0o700); err != nil {
			t.Fatal(err)
		}
		if marker != "" {
			if err := os.WriteFile(filepath.Join(dir, socketMarker), []byte(marker), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	self := limits.Self("")
	dead := mk("agentcore-"+self.NS+"-999999-5", bootID())
	oldBoot := mk(self.String()+".7", "another-boot")
	live := mk(self.String()+".8", bootID())
	unmarked := mk("agentcore-"+self.NS+"-999998-5", "")
	otherNS := mk("agentcore-1-999997-5", bootID()) // another PID namespace: cannot be proven dead
	other := mk("myfiles", bootID())
	RemoveStale(base, nil)
	for dir, gone := range map[string]bool{dead: true, oldBoot: true, live: false, unmarked: false, otherNS: false, other: false} {
		_, err := os.Stat(dir)
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", filepath.Base(dir), os.IsNotExist(err), gone)
		}
	}
}
