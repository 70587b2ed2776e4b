// podserve: one process that serves the ports of many simulated pods, each
// inside the pod's own network namespace (or on a loopback IP when the pod has
// none), for outprobe's local pod network (docs/adr/0014-pod-network.md).
//
// Control protocol: JSON lines on stdin, one reply line per request on stdout,
// in request order, carrying the request's id:
//
//	{"id":1,"op":"add","pod":"web-0","netns":"/run/netns/x","ip":"198.18.1.1",
//	 "ports":[{"port":8080,"name":"http","kind":"http"}],"healthy":true,"accessLog":true}
//	{"id":2,"op":"remove","pod":"web-0"}
//	{"id":3,"op":"health","pod":"web-0","healthy":false}
//	{"id":4,"op":"delay","pod":"web-0","ms":250}
//	{"id":5,"op":"stats"}          -> {"id":5,"ok":true,"stats":{"web-0":{"http":3,"tcp":0,"grpc":0}}}
//	{"id":6,"op":"ping"}
//	{"id":7,"op":"access"}         -> {"id":7,"ok":true,"access":{"web-0":[{"t":1765100000000,"from":"198.18.2.200"}]}}
//
// "access" drains the log of each pod added with "accessLog":true of HTTP requests (when, from which source
// address) since the last "access"; at most 10,000 per pod are kept between
// drains, and "dropped" counts those lost past that.
//
// `podserve serve KIND:PORT[:NAME] ...` serves one pod in its own namespaces
// instead (container mode, container.go).
//
// Replies are {"id":n,"ok":true,...} or {"id":n,"ok":false,"code":"...","error":"..."}.
// "add" replies once every listener is bound. The process exits when stdin
// closes, so it never outlives its parent.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Limits on what one request may ask for.
const (
	maxLine    = 64 << 10
	maxPods    = 4096
	maxPorts   = 16
	maxDelayMs = 60_000
	maxNameLen = 253
)

type request struct {
	ID      int64  `json:"id"`
	Op      string `json:"op"`
	Pod     string `json:"pod"`
	Netns   string `json:"netns"`
	IP      string `json:"ip"`
	Ports   []Port `json:"ports"`
	Healthy *bool  `json:"healthy"`
	Ms      *int64 `json:"ms"`
	// AccessLog ("add"): keep the pod's access log for "access".
	AccessLog bool `json:"accessLog"`
}

type reply struct {
	ID    int64             `json:"id"`
	OK    bool              `json:"ok"`
	Code  string            `json:"code,omitempty"`
	Error string            `json:"error,omitempty"`
	Stats map[string]Counts `json:"stats,omitempty"`
	// Access and Dropped answer "access".
	Access  map[string][]Access `json:"access,omitempty"`
	Dropped map[string]int64    `json:"dropped,omitempty"`
}

// fail is an error with a stable code for the client to branch on.
type fail struct{ code, msg string }

func (f *fail) Error() string { return f.msg }

func failf(code, format string, a ...any) *fail { return &fail{code, fmt.Sprintf(format, a...)} }

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(serveContainer(os.Args[2:]))
	}
	s := &server{pods: map[string]*pod{}}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, err := readLine(in)
		if len(line) > 0 || errors.Is(err, errTooLong) {
			r := reply{Code: "bad_request", Error: fmt.Sprintf("line longer than %d bytes", maxLine)}
			if !errors.Is(err, errTooLong) {
				r = s.handle(line)
			}
			_ = enc.Encode(r)
			_ = out.Flush()
		}
		if err != nil && !errors.Is(err, errTooLong) {
			break // stdin closed: the parent is gone or done
		}
	}
	s.stopAll()
}

var errTooLong = errors.New("line too long")

// readLine returns the next line without its newline; a line longer than
// maxLine is skipped to its end and reported as errTooLong.
func readLine(in *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := in.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine+1 {
			line = append(line, chunk...)
		} else {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = in.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			return nil, errTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}
