package remote

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kevinburke/ssh_config"
)

// Defaults for reading the user's OpenSSH files.
const (
	defaultSSHPort = 22
	// maxJumpDepth bounds ProxyJump chains (and catches loops in them).
	maxJumpDepth = 8
)

// defaultIdentities are the keys OpenSSH tries when no IdentityFile is
// configured, relative to ~/.ssh.
var defaultIdentities = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// hop is one SSH server on the way to a target: the target itself, or a
// ProxyJump host before it.
type hop struct {
	Name       string   // as written: an alias or user@host:port
	Host       string   // HostName, or the name itself
	Port       int      //
	User       string   //
	Identities []string // IdentityFile entries, ~ expanded, in config order
	KnownHosts []string // UserKnownHostsFile entries, ~ expanded
	// Certificates are CertificateFile entries, ~ expanded.
	Certificates []string
	// HostKeyAlias, when set, is the name the host key is looked up and
	// recorded under in known_hosts instead of host:port.
	HostKeyAlias string
	// ProxyCommand, tokens expanded, is run to reach this hop instead of a
	// TCP connection; only the first hop of a chain can have one.
	ProxyCommand string
	// ConnectTimeout, AliveInterval and AliveCountMax are the config's
	// ConnectTimeout, ServerAliveInterval and ServerAliveCountMax (zero when
	// not set, or not a positive number).
	ConnectTimeout time.Duration
	AliveInterval  time.Duration
	AliveCountMax  int
}

// Addr is "host:port" as dialed.
func (h hop) Addr() string { return net.JoinHostPort(h.Host, strconv.Itoa(h.Port)) }

// KeyName is what the hop's host key is looked up as in known_hosts: its
// HostKeyAlias, else host:port.
func (h hop) KeyName() string {
	if h.HostKeyAlias != "" {
		// OpenSSH records the alias alone, with no port; the known_hosts
		// reader wants host:port and drops a port of 22.
		return net.JoinHostPort(h.HostKeyAlias, strconv.Itoa(defaultSSHPort))
	}
	return h.Addr()
}

// sshConfig is the user's ssh_config, or none.
type sshConfig struct {
	lines []cfgLine          // the file, Includes inlined; nil when there is none
	base  *ssh_config.Config // every Match block left out
	home  string
	user  string // the local user, for %u and the default remote user
	// views holds the config as it reads for one target (Match evaluated).
	views map[matchTarget]*ssh_config.Config
	// notes name the Match blocks that could not be evaluated, once each.
	notes []string
	noted map[int]bool
}

// loadSSHConfig reads path; a missing file is an empty config.
func loadSSHConfig(file, home, localUser string) (*sshConfig, error) {
	c := &sshConfig{home: home, user: localUser, views: map[matchTarget]*ssh_config.Config{}, noted: map[int]bool{}}
	lines, err := readConfigLines(file, home, 0)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ssh config %s: %w", file, err)
	}
	c.lines = lines
	if c.base, err = decodeLines(lines, func(int, string) string { return neverHost }); err != nil {
		return nil, fmt.Errorf("reading ssh config %s: %w", file, err)
	}
	return c, nil
}

// hostView is the config as it applies to one target.
type hostView struct {
	cfg   *ssh_config.Config
	alias string
}

func (v hostView) get(key string) string {
	if v.cfg == nil {
		return ""
	}
	s, _ := v.cfg.Get(v.alias, key)
	return strings.TrimSpace(s)
}

func (v hostView) getAll(key string) []string {
	if v.cfg == nil {
		return nil
	}
	s, _ := v.cfg.GetAll(v.alias, key)
	return s
}

// view returns the config for alias, with user the remote user the target
// names ("" when it names none). Match criteria are evaluated against the
// values the Host blocks alone give, as a first pass.
func (c *sshConfig) view(alias, user string) hostView {
	if c.base == nil {
		return hostView{alias: alias}
	}
	first := hostView{cfg: c.base, alias: alias}
	t := matchTarget{alias: alias, host: alias, user: user, localUser: c.user}
	if hn := first.get("HostName"); hn != "" {
		t.host = strings.ReplaceAll(hn, "%h", alias)
	}
	if t.user == "" {
		t.user = first.get("User")
	}
	if t.user == "" {
		t.user = c.user
	}
	if cfg, ok := c.views[t]; ok {
		return hostView{cfg: cfg, alias: alias}
	}
	cfg, err := decodeLines(c.lines, func(i int, args string) string {
		matched, ok, why := evalMatch(args, t)
		if !ok && !c.noted[i] {
			c.noted[i] = true
			c.notes = append(c.notes, fmt.Sprintf("%s:%d: %s; its block is not applied", c.lines[i].file, c.lines[i].line, why))
		}
		if matched && ok {
			return "*"
		}
		return neverHost
	})
	if err != nil {
		// Only Match lines differ from the base, which decoded; should the
		// Host lines they became not, the Host blocks alone still apply.
		cfg = c.base
	}
	c.views[t] = cfg
	return hostView{cfg: cfg, alias: alias}
}

// splitTarget parses "[user@]host[:port]" (IPv6 in brackets); port is 0 when
// not given.
func splitTarget(t string) (user, host string, port int, err error) {
	if i := strings.LastIndex(t, "@"); i >= 0 {
		user, t = t[:i], t[i+1:]
	}
	host = t
	if strings.HasPrefix(t, "[") || strings.Count(t, ":") == 1 {
		h, p, err := net.SplitHostPort(t)
		if err != nil {
			return "", "", 0, fmt.Errorf("bad SSH target %q: %w", t, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", "", 0, fmt.Errorf("bad SSH target %q: bad port %q", t, p)
		}
		host, port = h, n
	}
	if host == "" {
		return "", "", 0, fmt.Errorf("bad SSH target %q: no host", t)
	}
	return user, host, port, nil
}

// resolve turns one target into a hop, applying the config's Host block for
// its host part, as `ssh TARGET` does. Values in the target win.
func (c *sshConfig) resolve(target string) (hop, error) {
	user, alias, port, err := splitTarget(target)
	if err != nil {
		return hop{}, err
	}
	h := hop{Name: target, Host: alias, Port: port, User: user}
	v := c.view(alias, user)
	if hn := v.get("HostName"); hn != "" {
		h.Host = strings.ReplaceAll(hn, "%h", alias)
	}
	if h.Port == 0 {
		if p := v.get("Port"); p != "" {
			if h.Port, err = strconv.Atoi(p); err != nil {
				return hop{}, fmt.Errorf("%s: bad Port %q in ssh config", target, p)
			}
		} else {
			h.Port = defaultSSHPort
		}
	}
	if h.User == "" {
		h.User = v.get("User")
	}
	if h.User == "" {
		h.User = c.user
	}
	for _, f := range v.getAll("IdentityFile") {
		h.Identities = append(h.Identities, c.expand(f, h))
	}
	if a := v.get("HostKeyAlias"); a != "" && !strings.EqualFold(a, "none") {
		h.HostKeyAlias = a
	}
	for _, f := range v.getAll("CertificateFile") {
		h.Certificates = append(h.Certificates, c.expand(f, h))
	}
	for _, f := range v.getAll("UserKnownHostsFile") {
		for _, w := range strings.Fields(f) {
			h.KnownHosts = append(h.KnownHosts, c.expand(w, h))
		}
	}
	h.ConnectTimeout = time.Duration(positive(v.get("ConnectTimeout"))) * time.Second
	h.AliveInterval = time.Duration(positive(v.get("ServerAliveInterval"))) * time.Second
	h.AliveCountMax = positive(v.get("ServerAliveCountMax"))
	return h, nil
}

// positive is a config value that must be a positive integer; 0 otherwise.
func positive(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// chain returns the hops to reach target, first the ProxyJump hosts (each
// resolved through the config, the first one's own ProxyJump included),
// then the target itself.
func (c *sshConfig) chain(target string, depth int) ([]hop, error) {
	if depth > maxJumpDepth {
		return nil, fmt.Errorf("ProxyJump chain to %s is longer than %d hops (a loop?)", target, maxJumpDepth)
	}
	last, err := c.resolve(target)
	if err != nil {
		return nil, err
	}
	user, alias, _, _ := splitTarget(target)
	v := c.view(alias, user)
	pj := v.get("ProxyJump")
	if pj == "" || strings.EqualFold(pj, "none") {
		// OpenSSH takes whichever of ProxyJump and ProxyCommand comes first
		// in the file; the config reader cannot tell, so ProxyJump wins.
		if pc := v.get("ProxyCommand"); pc != "" && !strings.EqualFold(pc, "none") {
			last.ProxyCommand = proxyCommandTokens(pc, last, alias)
		}
		return []hop{last}, nil
	}
	var hops []hop
	for i, j := range strings.Split(pj, ",") {
		j = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(j), "ssh://"))
		if i == 0 {
			first, err := c.chain(j, depth+1)
			if err != nil {
				return nil, fmt.Errorf("ProxyJump of %s: %w", target, err)
			}
			hops = append(hops, first...)
			continue
		}
		h, err := c.resolve(j)
		if err != nil {
			return nil, fmt.Errorf("ProxyJump of %s: %w", target, err)
		}
		hops = append(hops, h)
	}
	return append(hops, last), nil
}

// expand resolves ~ and the tokens OpenSSH allows in file names (%d home,
// %u local user, %r remote user, %h host, %p port, %%).
func (c *sshConfig) expand(p string, h hop) string {
	p = strings.Trim(p, `"`)
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = c.home + p[1:]
	}
	r := strings.NewReplacer("%%", "%", "%d", c.home, "%u", c.user, "%r", h.User, "%h", h.Host, "%p", strconv.Itoa(h.Port))
	return r.Replace(p)
}
