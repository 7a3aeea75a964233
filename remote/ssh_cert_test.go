package remote

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
)

// TestSSHCertificateRealSSHD logs in to a real sshd that trusts a user CA
// and has no authorized key for us: with the certificate beside the key
// (KEY-cert.pub), with one named by CertificateFile, and not at all with a
// certificate for another principal or none.
func TestSSHCertificateRealSSHD(t *testing.T) {
	dir := t.TempDir()
	_, ca := newEd25519(t)
	caFile := filepath.Join(dir, "user_ca.pub")
	if err := os.WriteFile(caFile, ssh.MarshalAuthorizedKey(ca.PublicKey()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := sshdtest.StartWith(t, sshdtest.Options{Config: "TrustedUserCAKeys " + caFile})

	e := newSSHEnv(t)
	sshDir := e.sshDir
	keyFile, pub, priv := clientKey(t, sshDir, "id_cert")
	sign := func(path string, principals ...string) *ssh.Certificate {
		t.Helper()
		c := &ssh.Certificate{Key: pub, CertType: ssh.UserCert, KeyId: "bakeoff-test", ValidPrincipals: principals,
			ValidBefore: ssh.CertTimeInfinity, Permissions: ssh.Permissions{Extensions: map[string]string{"permit-pty": ""}}}
		if err := c.SignCert(rand.Reader, ca); err != nil {
			t.Fatal(err)
		}
		if path != "" {
			if err := os.WriteFile(path, ssh.MarshalAuthorizedKey(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	cfg := filepath.Join(sshDir, "config")
	writeCfg := func(extra string) {
		t.Helper()
		body := fmt.Sprintf("Host gpu-box\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  UserKnownHostsFile %s\n%s",
			srv.Port, srv.User, srv.KnownHostsFile, extra)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dialIt := func() (*SSH, error) {
		return dial(t, SSHOptions{Target: "gpu-box", ConfigFile: cfg, Getenv: e.getenv, ConnectTimeout: 10 * time.Second, KeepaliveInterval: -1, ReconnectAttempts: 1})
	}
	run := func(h *SSH) {
		t.Helper()
		if out, _, err := h.Run(testCtx(t), "echo certified"); err != nil || string(out) != "certified\n" {
			t.Fatalf("Run with a certificate login = %q, %v\nsshd: %s", out, err, srv.Stderr())
		}
	}

	withKey := "  IdentityFile " + keyFile + "\n"
	writeCfg(withKey)
	if _, err := dialIt(); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("DialSSH with a key the server does not know and no certificate = %v; want an authentication failure", err)
	}

	sign(keyFile+"-cert.pub", srv.User)
	h, err := dialIt()
	if err != nil {
		t.Fatalf("DialSSH with KEY-cert.pub: %v\nsshd: %s", err, srv.Stderr())
	}
	run(h)
	h.Close()

	sign(keyFile+"-cert.pub", "someone-else")
	if _, err := dialIt(); err == nil {
		t.Fatal("DialSSH with a certificate for another principal succeeded")
	}

	elsewhere := filepath.Join(dir, "issued-cert.pub")
	sign(elsewhere, srv.User)
	writeCfg(withKey + "  CertificateFile " + elsewhere + "\n")
	h, err = dialIt()
	if err != nil {
		t.Fatalf("DialSSH with CertificateFile: %v\nsshd: %s", err, srv.Stderr())
	}
	run(h)
	h.Close()

	// A CertificateFile that cannot be used is named when the login fails.
	writeCfg(withKey + "  CertificateFile " + caFile + "\n")
	_, err = dialIt()
	if err == nil || !strings.Contains(err.Error(), "certificate "+caFile+": holds a plain") {
		t.Fatalf("DialSSH with a CertificateFile holding a plain key = %v; want it named", err)
	}

	// No files at all: the agent holds the key with its certificate.
	os.Remove(keyFile)
	os.Remove(keyFile + "-cert.pub")
	writeCfg("")
	e.startAgentWith(t, agent.AddedKey{PrivateKey: priv, Certificate: sign("", srv.User)})
	h, err = dialIt()
	if err != nil {
		t.Fatalf("DialSSH with the agent's certificate: %v\nsshd: %s", err, srv.Stderr())
	}
	run(h)
}

// TestSSHHostCertificateRealSSHD checks a real sshd's host certificate
// against a @cert-authority line, the only line known_hosts has for it, and
// refuses it when the line names another CA.
func TestSSHHostCertificateRealSSHD(t *testing.T) {
	_, ca := newEd25519(t)
	srv := sshdtest.StartWith(t, sshdtest.Options{HostCA: ca})
	e := newSSHEnv(t)
	known := filepath.Join(e.sshDir, "known_hosts_ca")
	e.writeConfig(t, fmt.Sprintf("Host gpu-box\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  UserKnownHostsFile %s\n",
		srv.Port, srv.User, srv.KeyFile, known))
	trust := func(k ssh.PublicKey) {
		t.Helper()
		line := fmt.Sprintf("@cert-authority [127.0.0.1]:%d %s", srv.Port, ssh.MarshalAuthorizedKey(k))
		if err := os.WriteFile(known, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	trust(ca.PublicKey())
	h, err := dial(t, e.opts("gpu-box"))
	if err != nil {
		t.Fatalf("DialSSH to a host with a certificate from a trusted CA: %v\nsshd: %s", err, srv.Stderr())
	}
	if out, _, err := h.Run(testCtx(t), "echo vouched"); err != nil || string(out) != "vouched\n" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	h.Close()

	_, other := newEd25519(t)
	trust(other.PublicKey())
	_, err = dial(t, e.opts("gpu-box"))
	if err == nil || !strings.Contains(err.Error(), "gpu-box: checking host key") {
		t.Fatalf("DialSSH to a host whose certificate no trusted CA signed = %v; want a host key error naming gpu-box", err)
	}
	t.Log(err)
}
