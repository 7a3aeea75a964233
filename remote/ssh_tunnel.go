package remote

import (
	"context"
	"fmt"
	"net"
)

// Dial connects to addr as seen from the host (e.g. "127.0.0.1:30000" for a
// server that listens only there), through the SSH connection
// (direct-tcpip). Many streams share the one connection.
func (s *SSH) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	l, err := s.link(ctx)
	if err != nil {
		return nil, err
	}
	c, err := l.client.DialContext(ctx, network, addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: dialing %s on the host: %w", s.Name(), addr, ctx.Err())
		}
		if l.isDead() {
			return nil, s.failed(l, "dialing "+addr+" on the host", err)
		}
		return nil, fmt.Errorf("%s: dialing %s on the host: %w", s.Name(), addr, err)
	}
	return c, nil
}
