package testhost

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh/knownhosts"
)

// clientConfig is the stanza a user would write for a GPU box.
const clientConfig = `
Host %[1]s
  HostName %[2]s
  Port 22
  User %[3]s
  IdentityFile %[4]s
  IdentitiesOnly yes
  UserKnownHostsFile %[5]s
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 10
`

// AddToHome appends this host's alias to home/.ssh/config and its key to
// home/.ssh/known_hosts, so one HOME can reach several hosts. The identity
// and known_hosts paths point into the host's own Home.
func (h *Host) AddToHome(home string) error {
	dir := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	kh := filepath.Join(dir, "known_hosts")
	stanza := fmt.Sprintf(clientConfig, h.Alias, h.IP, User, h.KeyFile, kh)
	if err := appendFile(filepath.Join(dir, "config"), stanza); err != nil {
		return err
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(h.Addr)}, h.HostKey)
	return appendFile(kh, line+"\n")
}

// HostKeyLine is the known_hosts line for the key sshd presents now.
func (h *Host) HostKeyLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(h.Addr)}, h.HostKey)
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
