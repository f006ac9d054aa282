package lmsctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// ConfigDirEnv names the directory of lmsctl's profiles instead of
// os.UserConfigDir()/lmsctl (tests and several identities on one machine).
const ConfigDirEnv = "LMSCTL_CONFIG_DIR"

// Profile is one server lmsctl is logged in to.
type Profile struct {
	Server string `json:"server"`
	// Host is sent as the Host header when the server's address does not
	// name the tenant (a load balancer, a test server).
	Host  string `json:"host,omitempty"`
	Token string `json:"token"`
	// Confirm holds the key of MCP confirmation tokens and the ids of
	// those used; a new login drops it, and with it every open token.
	Confirm *confirmState `json:"confirm,omitempty"`
}

type config struct {
	Current  string             `json:"current"`
	Profiles map[string]Profile `json:"profiles"`
}

func configPath(getenv func(string) string) (string, error) {
	if dir := getenv(ConfigDirEnv); dir != "" {
		return filepath.Join(dir, "profiles.json"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory (set %s): %w", ConfigDirEnv, err)
	}
	return filepath.Join(dir, "lmsctl", "profiles.json"), nil
}

func loadConfig(path string) (config, error) {
	c := config{Profiles: map[string]Profile{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if c.Profiles == nil {
		c.Profiles = map[string]Profile{}
	}
	return c, nil
}

// save writes the profiles readable by their owner only: they hold tokens.
// The file is replaced whole, so a reader never sees half of it.
func (c config) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".profiles-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// profile returns the named profile, or the current one for "".
func (c config) profile(name string) (string, Profile, error) {
	if name == "" {
		name = c.Current
	}
	p, ok := c.Profiles[name]
	if !ok || p.Token == "" {
		names := make([]string, 0, len(c.Profiles))
		for n := range c.Profiles {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", Profile{}, &Failure{Code: "NOT_LOGGED_IN", Exit: ExitAuth,
			Message: "Not logged in: run `lmsctl login --server URL` first.", Details: map[string]any{"profiles": names, "profile": name}}
	}
	return name, p, nil
}
