// A grpc-go health server for outprobe's gRPC prober tests: the same
// grpc-go release as the kubelet's client (k8s.io/kubernetes v1.37.2), so
// its replies, compression and deadline handling are grpc-go's own.
//
//	-gzip     compress every reply with gzip (grpc.SetSendCompressor)
//	-delay d  answer after d; a deadline that ends first gets grpc-go's own
//	          DEADLINE_EXCEEDED handling
//	-status s the ServingStatus to report (default SERVING)
//
// It listens on 127.0.0.1 on a free port, prints the port on its first
// line of stdout, and stops when stdin closes (the test process went away).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

type server struct {
	healthpb.UnimplementedHealthServer
	gzip   bool
	delay  time.Duration
	status healthpb.HealthCheckResponse_ServingStatus
}

func (s *server) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if s.gzip {
		if err := grpc.SetSendCompressor(ctx, "gzip"); err != nil {
			return nil, err
		}
	}
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &healthpb.HealthCheckResponse{Status: s.status}, nil
}

func main() {
	gz := flag.Bool("gzip", false, "compress every reply with gzip")
	delay := flag.Duration("delay", 0, "answer after this long")
	status := flag.String("status", "SERVING", "ServingStatus to report")
	flag.Parse()
	value, ok := healthpb.HealthCheckResponse_ServingStatus_value[*status]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown status %q\n", *status)
		os.Exit(2)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, &server{gzip: *gz, delay: *delay, status: healthpb.HealthCheckResponse_ServingStatus(value)})
	fmt.Println(lis.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		s.Stop()
	}()
	_ = s.Serve(lis)
}
