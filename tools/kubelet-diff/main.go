// Command kubelet-diff runs the kubelet's own probers (k8s.io/kubernetes/pkg/probe/{http,tcp,grpc})
// the way pkg/kubelet/prober calls them, on scenarios read as JSON lines from stdin, and prints one
// JSON line per scenario on stdout, in order. It is the reference side of outprobe's differential
// test tier (test/differential); the driver owns the servers and records what they receive.
//
// As in pkg/kubelet/prober/prober.go: HTTP requests come from httpprobe.NewRequestForHTTPGetAction
// (formatURL, User-Agent kube-probe/<major>.<minor>, Accept */*, Host from the headers) and run
// through httpprobe.New(followNonLocalRedirects=false); TCP through tcpprobe.New(); gRPC through
// grpcprobe.New() (plaintext); every probe is retried at once while it errors, up to 3 attempts
// (runProbeWithRetries, maxProbeRetries). The version reported in User-Agent comes from
// k8s.io/component-base/version, set with -ldflags -X by scripts/build-kubelet-diff.sh.
//
// `kubelet-diff grpc-server <host>` instead serves a real grpc-go Health service on <host>
// (loopback), prints its port and runs until stdin closes: the tier's real server for
// deadline races.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	// The kubelet binary links grpc-go's gzip codec (go list -deps k8s.io/kubernetes/cmd/kubelet
	// lists google.golang.org/grpc/encoding/gzip), so its gRPC probes advertise and decode gzip.
	_ "google.golang.org/grpc/encoding/gzip"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/probe"
	grpcprobe "k8s.io/kubernetes/pkg/probe/grpc"
	httpprobe "k8s.io/kubernetes/pkg/probe/http"
	tcpprobe "k8s.io/kubernetes/pkg/probe/tcp"
)

// maxProbeRetries is pkg/kubelet/prober's constant of the same name.
const maxProbeRetries = 3

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type scenario struct {
	ID             string   `json:"id"`
	Kind           string   `json:"kind"` // http | tcp | grpc
	Scheme         string   `json:"scheme,omitempty"`
	Host           string   `json:"host"` // the pod IP
	Port           int      `json:"port"`
	Path           string   `json:"path,omitempty"`
	Headers        []header `json:"headers,omitempty"`
	Service        string   `json:"service,omitempty"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
}

type result struct {
	ID       string `json:"id"`
	Result   string `json:"result"` // success | warning | failure | unknown
	Output   string `json:"output"`
	Error    string `json:"error,omitempty"` // set when every attempt errored
	Attempts int    `json:"attempts"`
	Millis   int64  `json:"ms"`
}

var (
	httpProber = httpprobe.New(false) // newProber: followNonLocalRedirects = false
	tcpProber  = tcpprobe.New()
	grpcProber = grpcprobe.New()
)

// runProbe mirrors prober.runProbe for the HTTP, TCP and gRPC handlers.
func runProbe(s scenario) (probe.Result, string, error) {
	timeout := time.Duration(s.TimeoutSeconds) * time.Second
	container := &v1.Container{Name: "app"}
	switch s.Kind {
	case "http":
		action := &v1.HTTPGetAction{Path: s.Path, Port: intstr.FromInt32(int32(s.Port)), Scheme: v1.URIScheme(s.Scheme)}
		for _, h := range s.Headers {
			action.HTTPHeaders = append(action.HTTPHeaders, v1.HTTPHeader{Name: h.Name, Value: h.Value})
		}
		req, err := httpprobe.NewRequestForHTTPGetAction(action, container, s.Host, "probe")
		if err != nil {
			return probe.Unknown, "", err
		}
		return httpProber.Probe(req, timeout)
	case "tcp":
		port, err := probe.ResolveContainerPort(intstr.FromInt32(int32(s.Port)), container)
		if err != nil {
			return probe.Unknown, "", err
		}
		return tcpProber.Probe(s.Host, port, timeout)
	case "grpc":
		return grpcProber.Probe(s.Host, s.Service, s.Port, timeout, grpcprobe.ProbeOptions{})
	default:
		return probe.Unknown, "", fmt.Errorf("missing probe handler for scenario %s", s.ID)
	}
}

// runProbeWithRetries mirrors prober.runProbeWithRetries.
func runProbeWithRetries(s scenario) result {
	start := time.Now()
	var (
		res    probe.Result
		output string
		err    error
		i      int
	)
	for i = 0; i < maxProbeRetries; i++ {
		res, output, err = runProbe(s)
		if err == nil {
			break
		}
	}
	r := result{ID: s.ID, Result: string(res), Output: output, Attempts: min(i+1, maxProbeRetries), Millis: time.Since(start).Milliseconds()}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// healthServer is a real grpc-go Health server for the tier's deadline races. Services:
// "" SERVING; "not-serving" NOT_SERVING; "slow-<ms>" SERVING after <ms> milliseconds (or the
// caller's deadline); anything else NotFound, as grpc-go's own health server answers.
type healthServer struct {
	healthpb.UnimplementedHealthServer
}

func (healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	svc := req.GetService()
	switch {
	case svc == "":
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
	case svc == "not-serving":
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
	case strings.HasPrefix(svc, "slow-"):
		ms, _ := strconv.Atoi(strings.TrimPrefix(svc, "slow-"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	default:
		return nil, status.Error(codes.NotFound, "unknown service")
	}
}

// serveGRPC runs `kubelet-diff grpc-server <host>`: prints the port, serves until stdin closes.
func serveGRPC(host string) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-diff: %v\n", err)
		os.Exit(2)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, healthServer{})
	go func() { _ = srv.Serve(l) }()
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Stop()
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "grpc-server" {
		serveGRPC(os.Args[2])
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var s scenario
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			fmt.Fprintf(os.Stderr, "kubelet-diff: bad scenario line: %v\n", err)
			os.Exit(2)
		}
		if err := out.Encode(runProbeWithRetries(s)); err != nil {
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-diff: reading stdin: %v\n", err)
		os.Exit(2)
	}
}
