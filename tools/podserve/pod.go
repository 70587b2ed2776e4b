// One served pod: its listeners (HTTP, bare TCP, gRPC health), its health, its
// artificial response delay and its request counters. HTTP answers 200 "ok\n" /
// 503 "unhealthy\n" on every path, naming the pod in an X-Pod header; gRPC health reports SERVING / NOT_SERVING;
// the bare TCP port listens only while the pod is healthy.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Port is one declared containerPort and how to serve it.
type Port struct {
	Port int    `json:"port"`
	Name string `json:"name"`
	Kind string `json:"kind"` // http | tcp | grpc
}

// Counts are the requests a pod answered: HTTP requests, accepted TCP
// connections on bare TCP ports, gRPC health calls (Check and Watch).
type Counts struct {
	HTTP int64 `json:"http"`
	TCP  int64 `json:"tcp"`
	GRPC int64 `json:"grpc"`
}

// Access is one HTTP request a pod's server saw: when (Unix ms) and from
// which source address (the prober's IP, without the port).
type Access struct {
	T    int64  `json:"t"`
	From string `json:"from"`
}

// maxAccess bounds a pod's undrained access log; older entries are dropped
// (and counted) past it.
const maxAccess = 10_000

type pod struct {
	name, netns, ip string
	ports           []Port

	logRequests bool // container mode (container.go)
	keepAccess  bool // "add" with "accessLog": true: keep an access log for "access"

	healthy atomic.Bool
	delayMs atomic.Int64
	http    atomic.Int64
	tcp     atomic.Int64
	grpc    atomic.Int64

	accessMu sync.Mutex // guards access and dropped
	access   []Access
	dropped  int64

	mu      sync.Mutex // guards the servers below
	https   []*http.Server
	grpcs   []*grpc.Server
	healths []*health.Server
	tcps    map[int]net.Listener
}

func newPod(name, netns, ip string, ports []Port, healthy bool) *pod {
	p := &pod{name: name, netns: netns, ip: ip, ports: ports, tcps: map[int]net.Listener{}}
	p.healthy.Store(healthy)
	return p
}

// start binds every port (all of them, in one namespace visit) and serves them;
// on any failure it closes what it opened and names the port.
func (p *pod) start() error {
	ls := make([]net.Listener, len(p.ports))
	err := inNetns(p.netns, func() error {
		for i, pt := range p.ports {
			if pt.Kind == "tcp" && !p.healthy.Load() {
				continue
			}
			l, err := net.Listen("tcp4", net.JoinHostPort(p.ip, fmt.Sprint(pt.Port)))
			if err != nil {
				return fmt.Errorf("port %d (%s): %w", pt.Port, pt.Name, err)
			}
			ls[i] = l
		}
		return nil
	})
	if err != nil {
		for _, l := range ls {
			if l != nil {
				l.Close()
			}
		}
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, pt := range p.ports {
		switch {
		case ls[i] == nil:
		case pt.Kind == "http":
			p.serveHTTP(ls[i])
		case pt.Kind == "grpc":
			p.serveGRPC(ls[i])
		default:
			p.tcps[pt.Port] = ls[i]
			go p.acceptTCP(ls[i])
		}
	}
	return nil
}

func (p *pod) wait(ctx context.Context) {
	ms := p.delayMs.Load()
	if ms <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (p *pod) serveHTTP(l net.Listener) {
	srv := &http.Server{
		IdleTimeout:       time.Second,
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.http.Add(1)
			if p.keepAccess {
				p.logAccess(r.RemoteAddr)
			}
			if p.logRequests {
				// Container mode: one line per request, so a test reads from `kubectl logs`
				// who probed the pod when (the kubelet from the node's bridge address,
				// outprobe from its replica's pod IP).
				fmt.Printf("request t=%d from=%s path=%s ua=%q\n", time.Now().UnixMilli(), r.RemoteAddr, r.URL.Path, r.UserAgent())
			}
			p.wait(r.Context())
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("X-Pod", p.name) // which pod answered: the Service clients of the demo and the partition test count by it
			if p.healthy.Load() {
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte("ok\n"))
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("unhealthy\n"))
		}),
	}
	p.https = append(p.https, srv)
	go func() { _ = srv.Serve(l) }()
}

func (p *pod) serveGRPC(l net.Listener) {
	hs := health.NewServer()
	hs.SetServingStatus("", p.grpcStatus())
	count := func(ctx context.Context) {
		p.grpc.Add(1)
		p.wait(ctx)
	}
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			count(ctx)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(s any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			count(ss.Context())
			return h(s, ss)
		}),
	)
	healthpb.RegisterHealthServer(srv, hs)
	p.grpcs = append(p.grpcs, srv)
	p.healths = append(p.healths, hs)
	go func() { _ = srv.Serve(l) }()
}

func (p *pod) grpcStatus() healthpb.HealthCheckResponse_ServingStatus {
	if p.healthy.Load() {
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_NOT_SERVING
}

// acceptTCP accepts until the listener closes; a connection is held until the
// peer closes it or 2 s pass, like pod-server.ts did.
func (p *pod) acceptTCP(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		p.tcp.Add(1)
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 512)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		}()
	}
}

// setHealthy flips health: gRPC status at once, bare TCP listeners closed
// (unhealthy) or reopened in the pod's namespace (healthy).
func (p *pod) setHealthy(healthy bool) error {
	p.healthy.Store(healthy)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, hs := range p.healths {
		hs.SetServingStatus("", p.grpcStatus())
	}
	var errs []error
	for _, pt := range p.ports {
		if pt.Kind != "tcp" {
			continue
		}
		l, open := p.tcps[pt.Port]
		switch {
		case !healthy && open:
			delete(p.tcps, pt.Port)
			l.Close()
		case healthy && !open:
			nl, err := listenTCP(p.netns, p.ip, pt.Port)
			if err != nil {
				errs = append(errs, fmt.Errorf("port %d (%s): %w", pt.Port, pt.Name, err))
				continue
			}
			p.tcps[pt.Port] = nl
			go p.acceptTCP(nl)
		}
	}
	return errors.Join(errs...)
}

// stop closes every listener and connection of the pod.
func (p *pod) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.https {
		_ = s.Close()
	}
	for _, g := range p.grpcs {
		g.Stop()
	}
	for port, l := range p.tcps {
		l.Close()
		delete(p.tcps, port)
	}
	p.https, p.grpcs, p.healths = nil, nil, nil
}

func (p *pod) counts() Counts {
	return Counts{HTTP: p.http.Load(), TCP: p.tcp.Load(), GRPC: p.grpc.Load()}
}

// logAccess records one HTTP request's source address in the pod's access log.
func (p *pod) logAccess(remote string) {
	from := remote
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		from = ap.Addr().String()
	}
	p.accessMu.Lock()
	defer p.accessMu.Unlock()
	if len(p.access) >= maxAccess {
		p.access = p.access[1:]
		p.dropped++
	}
	p.access = append(p.access, Access{T: time.Now().UnixMilli(), From: from})
}

// drainAccess returns the access log since the last drain and how many
// entries were dropped meanwhile, and empties it.
func (p *pod) drainAccess() ([]Access, int64) {
	p.accessMu.Lock()
	defer p.accessMu.Unlock()
	out, dropped := p.access, p.dropped
	p.access, p.dropped = nil, 0
	return out, dropped
}
