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

// auth is what one hop authenticates with: certificates first (each
// before its plain key, as OpenSSH offers them), then the configured
// identity files, then the agent's keys.
type auth struct {
	signers []ssh.Signer
	// encrypted names identity files that need a passphrase the agent does
	// not stand in for; they explain a failed login.
	encrypted []string
	// certProblems name certificate files that could not be used.
	certProblems []string
	agent        net.Conn
}

// Close releases the agent connection.
func (a *auth) Close() {
	if a.agent != nil {
		a.agent.Close()
	}
}

// newAuth loads files (missing defaults are skipped; a missing configured
// file is too, as OpenSSH does), the certificate beside each (FILE-cert.pub),
// the certificate files certs (CertificateFile), and the agent at sock
// ("" = none; the agent lists its certificates among its keys).
func newAuth(files, certs []string, sock string) (*auth, error) {
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
	// The identity files' signers, in order; an encrypted key stands for
	// the agent's copy of it.
	type identity struct {
		file   string
		signer ssh.Signer
	}
	var ids []identity
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
				ids = append(ids, identity{f, as})
			} else {
				a.encrypted = append(a.encrypted, f)
			}
		case err != nil:
			a.Close()
			return nil, fmt.Errorf("reading identity file %s: %w", f, err)
		default:
			ids = append(ids, identity{f, s})
		}
	}
	keyFor := func(pub ssh.PublicKey) ssh.Signer {
		for _, id := range ids {
			if bytes.Equal(id.signer.PublicKey().Marshal(), pub.Marshal()) {
				return id.signer
			}
		}
		return matchSigner(agentSigners, pub)
	}

	seen := map[string]bool{}
	add := func(s ssh.Signer) {
		k := string(s.PublicKey().Marshal())
		if !seen[k] {
			seen[k] = true
			a.signers = append(a.signers, s)
		}
	}
	for _, f := range certs {
		cs, err := certSigner(f, keyFor)
		if err != nil {
			a.certProblems = append(a.certProblems, err.Error())
			continue
		}
		add(cs)
	}
	for _, id := range ids {
		// FILE-cert.pub beside a key is offered before the key, as OpenSSH does.
		if cert := readCertificate(id.file + "-cert.pub"); cert != nil && bytes.Equal(cert.Key.Marshal(), id.signer.PublicKey().Marshal()) {
			if cs, err := ssh.NewCertSigner(cert, id.signer); err == nil {
				add(cs)
			}
		}
		add(id.signer)
	}
	for _, s := range agentSigners {
		add(s)
	}
	return a, nil
}

// certSigner reads the certificate in file and pairs it with the signer
// keyFor finds for its key.
func certSigner(file string, keyFor func(ssh.PublicKey) ssh.Signer) (ssh.Signer, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", file, err)
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", file, err)
	}
	cert, ok := k.(*ssh.Certificate)
	if !ok {
		return nil, fmt.Errorf("certificate %s: holds a plain %s key, not a certificate", file, k.Type())
	}
	s := keyFor(cert.Key)
	if s == nil {
		return nil, fmt.Errorf("certificate %s: no identity file or agent key matches its key (%s)", file, ssh.FingerprintSHA256(cert.Key))
	}
	return ssh.NewCertSigner(cert, s)
}

// readCertificate reads an OpenSSH certificate file; nil when there is
// none or it is not a certificate.
func readCertificate(path string) *ssh.Certificate {
	k := readPublicKey(path)
	cert, _ := k.(*ssh.Certificate)
	return cert
}

// explain adds what a failed login should say about keys.
func (a *auth) explain(err error) error {
	if len(a.encrypted) > 0 {
		return fmt.Errorf("%w (identity file %s is encrypted and no passphrase can be asked for: add it to ssh-agent with `ssh-add %s`)",
			err, strings.Join(a.encrypted, ", "), a.encrypted[0])
	}
	if len(a.signers) == 0 {
		err = fmt.Errorf("%w (no keys: no identity file could be read and ssh-agent offered none)", err)
	}
	if len(a.certProblems) > 0 {
		err = fmt.Errorf("%w (%s)", err, strings.Join(a.certProblems, "; "))
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
