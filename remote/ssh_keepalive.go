package remote

import "time"

// keepalive probes l every interval and closes it after max probes in a
// row go unanswered, so that no call on a dead link (a host that vanished,
// a NAT that forgot us) blocks forever: closing the link fails every call
// on it. A probe that is still waiting counts as unanswered.
func keepalive(l *link, interval time.Duration, max int) {
	t := time.NewTicker(interval)
	defer t.Stop()
	missed := 0
	var pending chan error
	for {
		select {
		case <-l.dead:
			return
		case err := <-pending:
			pending = nil
			if err == nil {
				missed = 0
			}
			continue
		case <-t.C:
		}
		if pending != nil {
			missed++ // the last probe is still unanswered
		} else {
			pending = make(chan error, 1)
			go func(ch chan error) { ch <- l.probe() }(pending)
			continue
		}
		if missed >= max {
			l.client.Close()
			return
		}
	}
}

// probe sends one keepalive@openssh.com request and waits for the reply.
// Any reply, even a refusal, proves the link is alive; sshd answers it
// itself, with no session and no shell.
func (l *link) probe() error {
	_, _, err := l.client.SendRequest("keepalive@openssh.com", true, nil)
	return err
}
