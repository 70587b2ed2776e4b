package main

// Container mode (docs/adr/0048-images-without-a-registry.md): `podserve serve
// KIND:PORT[:NAME] ...` serves one pod's ports in the namespaces it was started in
// (a real container on a real node), with the same answers as a simulated pod:
// HTTP 200 "ok\n" (X-Pod: the pod's name from $POD_NAME or the hostname), bare TCP,
// gRPC health. Each HTTP request is logged on stdout (time, source, path, User-Agent).
// It exits 0 on SIGTERM or SIGINT, like a well-behaved server.

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// parseServePorts reads KIND:PORT[:NAME] arguments.
func parseServePorts(args []string) ([]Port, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("usage: podserve serve KIND:PORT[:NAME] ... (KIND http, tcp or grpc)")
	}
	ports := make([]Port, 0, len(args))
	for _, a := range args {
		parts := strings.Split(a, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("port %q: want KIND:PORT[:NAME]", a)
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %q: %q is not a port number", a, parts[1])
		}
		if parts[0] != "http" && parts[0] != "tcp" && parts[0] != "grpc" {
			return nil, fmt.Errorf("port %q: kind %q is not http, tcp or grpc", a, parts[0])
		}
		name := parts[0]
		if len(parts) == 3 {
			name = parts[2]
		}
		ports = append(ports, Port{Port: n, Name: name, Kind: parts[0]})
	}
	if len(ports) > maxPorts {
		return nil, fmt.Errorf("at most %d ports", maxPorts)
	}
	return ports, nil
}

func serveContainer(args []string) int {
	ports, err := parseServePorts(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "podserve:", err)
		return 2
	}
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	p := newPod(name, "", "0.0.0.0", ports, true)
	p.logRequests = true
	if err := p.start(); err != nil {
		fmt.Fprintln(os.Stderr, "podserve:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "podserve: serving %s on %v\n", name, args)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	s := <-sigs
	fmt.Fprintf(os.Stderr, "podserve: %v, stopping\n", s)
	p.stop()
	return 0
}
