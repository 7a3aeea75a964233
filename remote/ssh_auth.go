package remote

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// auth is what one hop authenticates with: the configured identity files
// first, then the agent's keys.
type auth struct {
	signers []ssh.Signer
	// encrypted names identity files that need a passphrase the agent does
	// not stand in for; they explain a failed login.
	encrypted []string
	agent     net.Conn
}

// Close releases the agent connection.
func (a *auth) Close() {
	if a.agent != nil {
		a.agent.Close()
	}
}

// newAuth loads files (missing defaults are skipped; a missing configured
// file is too, as OpenSSH does) and the agent at sock ("" = none).
func newAuth(files []string, sock string) (*auth, error) {
	a := &auth{}
	var agentSigners []ssh.Signer
	if sock != "" {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			a.agent = conn
			agentSigners, err = agent.NewClient(conn).Signers()
			if err != nil {
				conn.Close()
				return nil, fmt.Errorf("listing the keys of ssh-agent (SSH_AUTH_SOCK): %w", err)
			}
		}
		// An unreachable agent is skipped, like OpenSSH does; the keys
		// from files may still do.
	}
	seen := map[string]bool{}
	add := func(s ssh.Signer) {
		k := string(s.PublicKey().Marshal())
		if !seen[k] {
			seen[k] = true
			a.signers = append(a.signers, s)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s, err := ssh.ParsePrivateKey(b)
		var pm *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &pm):
			// The agent may hold the decrypted key: use it first then.
			pub := pm.PublicKey
			if pub == nil {
				pub = readPublicKey(f + ".pub")
			}
			if as := matchSigner(agentSigners, pub); as != nil {
				add(as)
			} else {
				a.encrypted = append(a.encrypted, f)
			}
		case err != nil:
			a.Close()
			return nil, fmt.Errorf("reading identity file %s: %w", f, err)
		default:
			add(s)
		}
	}
	for _, s := range agentSigners {
		add(s)
	}
	return a, nil
}

// explain adds what a failed login should say about keys.
func (a *auth) explain(err error) error {
	if len(a.encrypted) > 0 {
		return fmt.Errorf("%w (identity file %s is encrypted and no passphrase can be asked for: add it to ssh-agent with `ssh-add %s`)",
			err, strings.Join(a.encrypted, ", "), a.encrypted[0])
	}
	if len(a.signers) == 0 {
		return fmt.Errorf("%w (no keys: no identity file could be read and ssh-agent offered none)", err)
	}
	return err
}

func readPublicKey(path string) ssh.PublicKey {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil
	}
	return k
}

func matchSigner(ss []ssh.Signer, pub ssh.PublicKey) ssh.Signer {
	if pub == nil {
		return nil
	}
	for _, s := range ss {
		if bytes.Equal(s.PublicKey().Marshal(), pub.Marshal()) {
			return s
		}
	}
	return nil
}
