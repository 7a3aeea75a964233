package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a host key that is not trusted: unknown (not in any
// known_hosts file, and accept-new not allowed) or changed (known_hosts holds
// a different key for the host, which always fails).
type HostKeyError struct {
	Host        string // the hop as the user named it
	Address     string // as known_hosts names it: "host" or "[host]:port"
	KeyType     string // the key the server offered
	Fingerprint string // its SHA256 fingerprint
	Changed     bool   // known_hosts holds another key for this host
	// Known lists, for a changed key, where the expected keys are
	// ("~/.ssh/known_hosts:12").
	Known          []string
	KnownHostsFile string // the file accept-new writes to
}

func (e *HostKeyError) Error() string {
	if e.Changed {
		return fmt.Sprintf("%s: HOST KEY CHANGED for %s: the server offered %s %s, but %s holds another key; "+
			"this can be an attack; if the host was reinstalled, remove the old key with `ssh-keygen -R '%s'` and connect again",
			e.Host, e.Address, e.KeyType, e.Fingerprint, strings.Join(e.Known, ", "), e.Address)
	}
	return fmt.Sprintf("%s: unknown host key for %s (%s %s, not in %s); "+
		"check the fingerprint and trust it with `ssh %s` once, or set host.accept_new: true to add it on first contact",
		e.Host, e.Address, e.KeyType, e.Fingerprint, e.KnownHostsFile, e.Host)
}

// hostKeys checks server keys against known_hosts files. The first file is
// the one accept-new appends to.
type hostKeys struct {
	files     []string
	acceptNew bool
}

// knownHostsWrite makes one writer of known_hosts per process.
var knownHostsWrite sync.Mutex

// load returns the callback of the files that exist; none is an empty
// database.
func (k hostKeys) load() (ssh.HostKeyCallback, error) {
	var existing []string
	for _, f := range k.files {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		}
	}
	if len(existing) == 0 {
		return func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }, nil
	}
	cb, err := knownhosts.New(existing...)
	if err != nil {
		return nil, fmt.Errorf("reading known_hosts: %w", err)
	}
	return cb, nil
}

// algorithms returns the host key algorithms known_hosts holds for addr, so
// that the server offers a key we can check: without it the server may
// pick, say, ecdsa while known_hosts holds its ed25519 key, and the check
// fails as "changed". Nil means no preference (the host is unknown).
func (k hostKeys) algorithms(addr string) ([]string, error) {
	cb, err := k.load()
	if err != nil {
		return nil, err
	}
	var ke *knownhosts.KeyError
	// A key that cannot match makes the callback list the known ones.
	if err := cb(addr, fakeAddr(addr), probeKey); !errors.As(err, &ke) {
		return nil, nil
	}
	var algos []string
	seen := map[string]bool{}
	if k.hasAuthority(addr) {
		// A host certificate is what a @cert-authority line can check; ask
		// for one first, then for plain keys, so that a host without one
		// fails as unknown, naming its key, not as "no common algorithm".
		plain := ssh.SupportedAlgorithms().HostKeys
		if len(ke.Want) > 0 {
			plain = nil
		}
		for _, a := range append(certHostKeyAlgorithms, plain...) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	for _, w := range ke.Want {
		for _, a := range algorithmsFor(w.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos, nil
}

// certHostKeyAlgorithms are the host certificate algorithms, preferred
// first as OpenSSH orders them.
var certHostKeyAlgorithms = []string{
	ssh.CertAlgoED25519v01, ssh.CertAlgoECDSA256v01, ssh.CertAlgoECDSA384v01, ssh.CertAlgoECDSA521v01,
	ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01,
}

// hasAuthority reports whether a @cert-authority line of the known_hosts
// files names addr ("host:port"). Patterns match as knownhosts matches
// them: "[host]:port" for a port other than 22, globs with * and ?.
func (k hostKeys) hasAuthority(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	target := host
	if port != "22" {
		target = "[" + host + "]:" + port
	}
	for _, f := range k.files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			marker, hosts, _, _, _, err := ssh.ParseKnownHosts([]byte(line))
			if err == nil && marker == "cert-authority" && matchPatternList(strings.Join(hosts, ","), target) {
				return true
			}
		}
	}
	return false
}

// algorithmsFor maps a key type to the signature algorithms that prove it.
func algorithmsFor(keyType string) []string {
	switch keyType {
	case ssh.KeyAlgoRSA:
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	case ssh.CertAlgoRSAv01:
		return []string{ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01, ssh.CertAlgoRSAv01}
	}
	return []string{keyType}
}

// callback returns the check for one hop, named host in errors.
func (k hostKeys) callback(host string) (ssh.HostKeyCallback, error) {
	cb, err := k.load()
	if err != nil {
		return nil, err
	}
	return func(addr string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(addr, remote, key)
		var ke *knownhosts.KeyError
		if err == nil || !errors.As(err, &ke) {
			if err != nil {
				return fmt.Errorf("%s: checking host key: %w", host, err)
			}
			return nil
		}
		he := &HostKeyError{
			Host: host, Address: knownhosts.Normalize(addr), KeyType: key.Type(),
			Fingerprint: ssh.FingerprintSHA256(key), Changed: len(ke.Want) > 0,
		}
		if len(k.files) > 0 {
			he.KnownHostsFile = k.files[0]
		}
		for _, w := range ke.Want {
			he.Known = append(he.Known, fmt.Sprintf("%s:%d", w.Filename, w.Line))
		}
		if he.Changed || !k.acceptNew || he.KnownHostsFile == "" {
			return he
		}
		if err := appendKnownHost(he.KnownHostsFile, addr, key); err != nil {
			return fmt.Errorf("%s: adding the host key of %s to %s: %w", host, he.Address, he.KnownHostsFile, err)
		}
		return nil
	}, nil
}

// appendKnownHost adds a line for addr to file, creating it (and its
// directory, 0700) if needed.
func appendKnownHost(file, addr string, key ssh.PublicKey) error {
	knownHostsWrite.Lock()
	defer knownHostsWrite.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, key) + "\n"
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		// A file whose last line lacks its newline would glue ours onto it.
		if b, err := os.ReadFile(file); err == nil && b[len(b)-1] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fakeAddr is the net.Addr the probe passes; knownhosts matches on the
// address string and only uses this for IP patterns.
func fakeAddr(addr string) net.Addr {
	host, _, _ := net.SplitHostPort(addr)
	return &net.TCPAddr{IP: net.ParseIP(host)}
}

// probeKey is a public key no known_hosts file holds.
var probeKey ssh.PublicKey = probe{}

type probe struct{}

func (probe) Type() string                        { return "bakeoff-probe" }
func (probe) Marshal() []byte                     { return []byte("bakeoff-probe") }
func (probe) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }
