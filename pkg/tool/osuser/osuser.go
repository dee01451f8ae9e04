// Package osuser resolves the OS users and groups of the settings: the user
// a tool plugin runs as (-plugin-user) and the owner of a Unix socket.
package osuser

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// Credential resolves -plugin-user USER[:GROUP] to the Config.Credential
// plugins run with (nil: the server's own). Only root may run plugins as
// another user; naming the server's own user is allowed and changes nothing.
func Credential(spec string) (*syscall.Credential, error) {
	if spec == "" {
		return nil, nil
	}
	uid, gid, err := UserGroup(spec)
	if err != nil {
		return nil, fmt.Errorf("plugin-user %q: %w", spec, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("plugin-user %q: plugins must not run as root; name an unprivileged user", spec)
	}
	if euid := os.Geteuid(); euid != 0 {
		if euid == uid && os.Getegid() == gid {
			return nil, nil
		}
		return nil, fmt.Errorf("plugin-user %q: only root can run plugins as another user, and agent-server runs as uid %d", spec, euid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// UserGroup resolves USER[:GROUP] (names or numeric ids; the group
// defaults to the user's) to ids.
func UserGroup(spec string) (uid, gid int, err error) {
	name, group, hasGroup := strings.Cut(spec, ":")
	u, err := lookupUser(name)
	if err != nil {
		return 0, 0, err
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if hasGroup {
		if gid, err = lookupGroup(group); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

func lookupUser(name string) (*user.User, error) {
	if _, err := strconv.ParseUint(name, 10, 32); err == nil {
		if u, err := user.LookupId(name); err == nil {
			return u, nil
		}
		// A numeric id without a passwd entry: its group is the same number.
		return &user.User{Uid: name, Gid: name, Username: name}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	return u, nil
}

func lookupGroup(name string) (int, error) {
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		return int(id), nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return 0, errors.New("group " + name + " has no numeric id")
	}
	return int(id), nil
}
