// The request handler: validates each request and applies it to the pod table.
// Requests are handled one at a time, in order, so a reply means the change is
// in effect (an "add" is bound, a "health" flip has closed or reopened ports).
package main

import (
	"encoding/json"
	"net/netip"
	"regexp"
)

type server struct {
	pods map[string]*pod
}

var (
	loopback   = netip.MustParsePrefix("127.0.0.0/8")
	podNetwork = netip.MustParsePrefix("198.18.0.0/15")
	netnsPath  = regexp.MustCompile(`^(/var)?/run/netns/[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)
	podName    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$`)
)

func (s *server) handle(line []byte) reply {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return reply{ID: req.ID, Code: "bad_request", Error: "not a JSON request: " + err.Error()}
	}
	r := reply{ID: req.ID, OK: true}
	var err error
	switch req.Op {
	case "ping":
	case "add":
		err = s.add(req)
	case "remove":
		err = s.remove(req)
	case "health":
		err = s.health(req)
	case "delay":
		err = s.delay(req)
	case "stats":
		r.Stats = s.stats()
	case "access":
		r.Access, r.Dropped = s.accessLogs()
	default:
		err = failf("bad_request", "unknown op %q", req.Op)
	}
	if err != nil {
		r.OK = false
		r.Error = err.Error()
		r.Code = "bind_failed"
		if f, ok := err.(*fail); ok {
			r.Code = f.code
		}
	}
	return r
}

func validName(name string) error {
	if len(name) == 0 || len(name) > maxNameLen || !podName.MatchString(name) {
		return failf("bad_request", "bad pod name %q", name)
	}
	return nil
}

func validAddress(req request) error {
	ip, err := netip.ParseAddr(req.IP)
	if err != nil || !ip.Is4() {
		return failf("bad_request", "pod %s: ip %q is not an IPv4 address", req.Pod, req.IP)
	}
	if req.Netns == "" && !loopback.Contains(ip) {
		return failf("bad_request", "pod %s: without a netns only 127.0.0.0/8 is served, not %s", req.Pod, ip)
	}
	if req.Netns != "" && !podNetwork.Contains(ip) {
		return failf("bad_request", "pod %s: in a netns only 198.18.0.0/15 is served, not %s", req.Pod, ip)
	}
	if req.Netns != "" && !netnsPath.MatchString(req.Netns) {
		return failf("bad_request", "pod %s: netns %q is not /run/netns/<name>", req.Pod, req.Netns)
	}
	return nil
}

func validPorts(req request) error {
	if len(req.Ports) > maxPorts { // none is fine: a pod that declares no port is served with nothing
		return failf("bad_request", "pod %s: %d ports (at most %d)", req.Pod, len(req.Ports), maxPorts)
	}
	seen := map[int]bool{}
	for _, p := range req.Ports {
		if p.Port < 1 || p.Port > 65535 || seen[p.Port] {
			return failf("bad_request", "pod %s: port %d is out of range or repeated", req.Pod, p.Port)
		}
		if p.Kind != "http" && p.Kind != "tcp" && p.Kind != "grpc" {
			return failf("bad_request", "pod %s: port %d has kind %q (want http, tcp or grpc)", req.Pod, p.Port, p.Kind)
		}
		seen[p.Port] = true
	}
	return nil
}

func (s *server) add(req request) error {
	if err := validName(req.Pod); err != nil {
		return err
	}
	if err := validAddress(req); err != nil {
		return err
	}
	if err := validPorts(req); err != nil {
		return err
	}
	if req.Healthy == nil {
		return failf("bad_request", "pod %s: healthy is required", req.Pod)
	}
	if _, ok := s.pods[req.Pod]; ok {
		return failf("exists", "pod %s is already served", req.Pod)
	}
	if len(s.pods) >= maxPods {
		return failf("limit", "already serving %d pods (the limit)", maxPods)
	}
	p := newPod(req.Pod, req.Netns, req.IP, req.Ports, *req.Healthy)
	p.keepAccess = req.AccessLog
	if err := p.start(); err != nil {
		return failf("bind_failed", "pod %s: %v", req.Pod, err)
	}
	s.pods[req.Pod] = p
	return nil
}

func (s *server) lookup(name string) (*pod, error) {
	p, ok := s.pods[name]
	if !ok {
		return nil, failf("not_found", "pod %q is not served", name)
	}
	return p, nil
}

func (s *server) remove(req request) error {
	p, err := s.lookup(req.Pod)
	if err != nil {
		return err
	}
	delete(s.pods, req.Pod)
	p.stop()
	return nil
}

func (s *server) health(req request) error {
	p, err := s.lookup(req.Pod)
	if err != nil {
		return err
	}
	if req.Healthy == nil {
		return failf("bad_request", "pod %s: healthy is required", req.Pod)
	}
	if err := p.setHealthy(*req.Healthy); err != nil {
		return failf("bind_failed", "pod %s: %v", req.Pod, err)
	}
	return nil
}

func (s *server) delay(req request) error {
	p, err := s.lookup(req.Pod)
	if err != nil {
		return err
	}
	if req.Ms == nil || *req.Ms < 0 || *req.Ms > maxDelayMs {
		return failf("bad_request", "pod %s: ms must be 0..%d", req.Pod, maxDelayMs)
	}
	p.delayMs.Store(*req.Ms)
	return nil
}

func (s *server) stats() map[string]Counts {
	out := make(map[string]Counts, len(s.pods))
	for name, p := range s.pods {
		out[name] = p.counts()
	}
	return out
}

// accessLogs drains every served pod's access log (pods with nothing new are left out).
func (s *server) accessLogs() (map[string][]Access, map[string]int64) {
	logs := map[string][]Access{}
	dropped := map[string]int64{}
	for name, p := range s.pods {
		a, d := p.drainAccess()
		if len(a) > 0 {
			logs[name] = a
		}
		if d > 0 {
			dropped[name] = d
		}
	}
	return logs, dropped
}

func (s *server) stopAll() {
	for name, p := range s.pods {
		delete(s.pods, name)
		p.stop()
	}
}
