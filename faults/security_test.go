package faults

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/results"
)

// payload is a value built to run `touch MARK/tag-N` if any shell on the way
// ever interprets it: command substitution both ways, separators, pipes,
// quotes that would close a quoted word, globs, a comment, a backslash.
func payload(markDir, tag string) string {
	m := func(n int) string { return filepath.Join(markDir, tag+"-"+strconv.Itoa(n)) }
	return "x $(touch " + m(1) + ") `touch " + m(2) + "`; touch " + m(3) + " | touch " + m(4) +
		" && touch " + m(5) + " ' ; touch " + m(6) + " ; ' \" ; touch " + m(7) + " ; \" \\ * ? ~ {a,b} # !"
}

// Secrets the campaign's environment holds; none may be written anywhere.
const (
	secretAPIKey     = "sk-bakeoff-fault-suite-0123456789abcdef"
	secretPassphrase = "correct horse battery staple 4711"
)

// TestSecurity runs one campaign built to leak: shell metacharacters in
// every free-text field (model, description, argument values, scenario and
// engine environment values), an encrypted client key whose passphrase only
// ssh-agent knows, and API keys in bakeoff's environment. Afterwards: no
// marker file exists (nothing was interpreted by a shell, locally or on the
// host), the engine got every value byte for byte, host files are
// user-only and results are where they may hold secrets, and no secret
// appears in any file or output.
func TestSecurity(t *testing.T) {
	t.Parallel()
	r := newRig(t, testhost.WithKeyPassphrase(secretPassphrase))
	marks := t.TempDir()
	agentSock := r.startAgent(r.host.KeyFile, secretPassphrase)
	r.env = append(r.env, "SSH_AUTH_SOCK="+agentSock, "OPENAI_API_KEY="+secretAPIKey, "HF_TOKEN="+secretAPIKey)

	values := map[string]string{
		"model":             payload(marks, "model"),
		"served-model-name": payload(marks, "served"),
		"chat-template":     payload(marks, "template"),
		"tokenizer-path":    payload(marks, "tokenizer"),
		"META_SCENARIO":     payload(marks, "env"),
		"META_ENGINE":       payload(marks, "engine-env"),
	}
	s := spec{
		name: "security",
		scenarios: []scen{{
			name: "meta",
			args: map[string]any{
				"served-model-name": values["served-model-name"],
				"chat-template":     values["chat-template"],
				"tokenizer-path":    values["tokenizer-path"],
			},
			env: map[string]string{"META_SCENARIO": values["META_SCENARIO"]},
		}},
		engineEnv: map[string]string{"META_ENGINE": values["META_ENGINE"]},
		model:     values["model"],
		desc:      payload(marks, "description"),
	}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	done, wait := r.runInBackground(ctx, "run", cfg, "--out", out)
	argv, env := r.serverProcess(ctx, done)
	res := wait()
	if res.code != 0 {
		t.Fatalf("want exit 0, got %s", res)
	}
	r.checkEndState(out, s, nil)

	if left, _ := os.ReadDir(marks); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("a shell interpreted planted values: marker files %v", names)
	}
	checkArg(t, argv, "--model-path", values["model"])
	for _, k := range []string{"served-model-name", "chat-template", "tokenizer-path"} {
		checkArg(t, argv, "--"+k, values[k])
	}
	for _, k := range []string{"META_SCENARIO", "META_ENGINE"} {
		if !containsString(env, k+"="+values[k]) {
			t.Errorf("the server's environment lacks %s byte for byte; it has %q", k, grep(env, k))
		}
	}

	checkRunModes(t, out)
	checkUserOnly(t, r.host.Workdir)
	key, err := os.ReadFile(r.host.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"API key":        secretAPIKey,
		"key passphrase": secretPassphrase,
		"private key":    pemBody(key),
	}
	for what, secret := range secrets {
		for _, dir := range []string{out, r.host.Workdir} {
			if f := fileContaining(t, dir, secret); f != "" {
				t.Errorf("the %s is written in %s", what, f)
			}
		}
		if strings.Contains(res.stdout+res.stderr, secret) {
			t.Errorf("the %s is in bakeoff's output", what)
		}
	}
}

// TestEncryptedKeyWithoutAgent gives bakeoff an encrypted key and no agent:
// it cannot ask for a passphrase, so it must fail at once, saying which key
// and how to add it, without a panic and without key material in the
// message.
func TestEncryptedKeyWithoutAgent(t *testing.T) {
	t.Parallel()
	r := newRig(t, testhost.WithKeyPassphrase(secretPassphrase))
	s := spec{name: "no-agent", scenarios: []scen{{name: "a"}}}
	cfg := r.write(s)
	res := r.bakeoff("run", cfg, "--out", filepath.Join(r.dir, "run"))
	if res.code == 0 {
		t.Fatalf("ran with an encrypted key and no agent: %s", res)
	}
	if !strings.Contains(res.stderr, "encrypted") || !strings.Contains(res.stderr, "ssh-add") {
		t.Errorf("the error does not say the key is encrypted and how to add it: %s", res)
	}
	key, _ := os.ReadFile(r.host.KeyFile)
	if strings.Contains(res.stdout+res.stderr, pemBody(key)) {
		t.Errorf("key material in the output")
	}
	if n := r.acceptedLogins(); n != 0 {
		t.Errorf("sshd accepted %d logins", n)
	}
}

// TestChangedHostKeyStopsCampaign runs a campaign, gives the host a new key
// (a reinstall, or a machine in the middle), and runs again: the second run
// must stop before authenticating, so no command can have run, and say the
// key changed.
func TestChangedHostKeyStopsCampaign(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := spec{name: "host-key", scenarios: []scen{{name: "a"}}}
	cfg := r.write(s)
	// A Match exec block, which bakeoff does not run: the first run goes on
	// as the Host blocks say and warns that the block was left out.
	f, err := os.OpenFile(r.host.SSHConfig, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\nMatch exec \"true\"\n  User nobody-at-all\n")
	f.Close()
	res := r.bakeoff("run", cfg, "--out", filepath.Join(r.dir, "run1"))
	if res.code != 0 {
		t.Fatalf("first run: %s", res)
	}
	if !strings.Contains(res.stderr, "warning: ssh config ("+r.host.Alias+"): "+r.host.SSHConfig+":") || !strings.Contains(res.stderr, "Match exec is not evaluated") {
		t.Errorf("no warning about the Match exec block: %s", res)
	}
	logins := r.acceptedLogins()
	if logins == 0 {
		t.Fatalf("the first run left no login in sshd's log; cannot tell logins apart")
	}
	r.host.ChangeHostKey()
	res = r.bakeoff("run", cfg, "--out", filepath.Join(r.dir, "run2"))
	if res.code == 0 {
		t.Fatalf("the run went on against a changed host key: %s", res)
	}
	if !strings.Contains(res.stderr, "HOST KEY CHANGED") {
		t.Errorf("the error does not say the host key changed: %s", res)
	}
	if n := r.acceptedLogins(); n != logins {
		t.Errorf("sshd accepted %d logins after the key changed", n-logins)
	}
	r.checkNothingLeft()
}

// acceptedLogins counts successful authentications in sshd's log.
func (r *rig) acceptedLogins() int {
	b, err := os.ReadFile(r.host.SSHDLog)
	if err != nil {
		r.t.Fatal(err)
	}
	return bytes.Count(b, []byte("Accepted publickey"))
}

// sessions counts the commands and subsystems sshd started.
func (r *rig) sessions() int {
	b, err := os.ReadFile(r.host.SSHDLog)
	if err != nil {
		r.t.Fatal(err)
	}
	return bytes.Count(b, []byte("Starting session:"))
}

// startAgent starts an ssh-agent for this test, adds key to it (answering
// the passphrase prompt through SSH_ASKPASS) and returns its socket. The
// agent is killed at cleanup.
func (r *rig) startAgent(key, passphrase string) string {
	r.t.Helper()
	dir := r.t.TempDir()
	sock := filepath.Join(dir, "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		r.t.Skipf("ssh-agent: %v (apt-get install openssh-client)", err)
	}
	r.t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 200 {
			r.t.Fatalf("ssh-agent did not create %s", sock)
		}
		time.Sleep(25 * time.Millisecond)
	}
	askpass := filepath.Join(dir, "askpass")
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte(passphrase), 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\ncat "+passFile+"\n"), 0o700); err != nil {
		r.t.Fatal(err)
	}
	add := exec.Command("ssh-add", key)
	add.Env = []string{"SSH_AUTH_SOCK=" + sock, "SSH_ASKPASS=" + askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none"}
	add.Stdin = nil
	add.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := add.CombinedOutput(); err != nil {
		r.t.Fatalf("ssh-add: %v: %s", err, out)
	}
	return sock
}

// serverProcess waits for the server on the host and returns its argv and
// environment, read from /proc while it runs.
func (r *rig) serverProcess(ctx context.Context, done <-chan struct{}) (argv, env []string) {
	r.t.Helper()
	// The server itself, not the shell that launched it nor its scheduler
	// children (which rename themselves), nor the preflight's `sim --help`
	// before it.
	sim := isBakeoff("sim")
	pid := r.waitHostProcess(ctx, done, func(p testhost.Process) bool {
		return sim(p) && !slices.Contains(strings.Fields(p.Cmdline), "--help")
	})
	if pid == 0 {
		r.t.Fatal("the server never ran on the host")
	}
	read := func(name string) []string {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
		if err != nil {
			r.t.Fatalf("reading the server's %s: %v", name, err)
		}
		return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	return read("cmdline"), read("environ")
}

func checkArg(t *testing.T, argv []string, flag, want string) {
	t.Helper()
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			if argv[i+1] != want {
				t.Errorf("%s reached the server as %q, want %q", flag, argv[i+1], want)
			}
			return
		}
		if a == flag+"="+want {
			return
		}
	}
	t.Errorf("%s is not among the server's arguments %q", flag, argv)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func grep(list []string, prefix string) []string {
	var out []string
	for _, x := range list {
		if strings.HasPrefix(x, prefix) {
			out = append(out, x)
		}
	}
	return out
}

// checkUserOnly fails for any file or directory under root that group or
// others may read, write or enter: results name hosts, paths and models.
func checkUserOnly(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walking %s: %v", p, err)
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		// The bakeoff binary uploaded to the host, and its directory, are a
		// program, not data.
		if strings.HasSuffix(p, "/bin/bakeoff") || strings.HasSuffix(p, "/bin") || p == root {
			return nil
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v; results and logs must be user-only", p, info.Mode().Perm())
		}
		return nil
	})
}

// checkRunModes fails for a file of the run directory under root that may
// hold secrets (results.Secret: the campaign's environment, launch command
// lines, the server's log) and that group or others may read, and for any
// file or directory that group or others may write. The other results
// follow the umask, so that a report can be shared.
func checkRunModes(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walking %s: %v", p, err)
			return nil
		}
		info, err := d.Info()
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		perm := info.Mode().Perm()
		switch {
		case !d.IsDir() && results.Secret(d.Name()) && perm&0o077 != 0:
			t.Errorf("%s has mode %v; a file that may hold secrets must be user-only", p, perm)
		case perm&0o022 != 0:
			t.Errorf("%s has mode %v; group and others must not write results", p, perm)
		}
		return nil
	})
}

// fileContaining returns the first file under root holding secret.
func fileContaining(t *testing.T, root, secret string) string {
	t.Helper()
	found := ""
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(secret)) {
			found = p
		}
		return nil
	})
	return found
}

// pemBody is the longest line of a PEM file: key material, not framing.
func pemBody(pem []byte) string {
	best := ""
	for _, l := range strings.Split(string(pem), "\n") {
		if len(l) > len(best) && !strings.HasPrefix(l, "-----") {
			best = l
		}
	}
	return best
}
