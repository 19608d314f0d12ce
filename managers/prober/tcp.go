package prober

import (
	"context"
	"net"
	"strconv"
	"time"
)

// probeTCP succeeds when a TCP connection to host:port opens within
// timeout; the connection is closed at once.
func probeTCP(ctx context.Context, host string, port int, timeout time.Duration) (outcome, string, error) {
	d := probeDialer()
	d.Timeout = timeout
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return outcomeFailure, err.Error(), nil
	}
	_ = conn.Close() // nothing was written: a close error changes nothing
	return outcomeSuccess, "", nil
}

// probeDialer returns the dialer of every probe connection. On Unix it sets
// SO_LINGER to 1s so that closed probe sockets do not pile up in TIME_WAIT,
// as the kubelet's.
func probeDialer() *net.Dialer {
	return &net.Dialer{Control: lingerControl}
}
