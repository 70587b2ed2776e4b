// A frame-level HTTP/2 server (golang.org/x/net/http2's Framer) for the
// connection-level cases no HTTP/2 library lets a server produce at will:
// a GOAWAY whose last-stream-id leaves the client's stream out, and a
// connection reset (RST) right after a GOAWAY. It answers every stream it
// does not drop with a SERVING health reply.
//
//	-mode goaway-first  the first connection sends GOAWAY(last-stream-id 0) at the
//	                    first request and stays open; later connections answer
//	-mode goaway-all    every connection sends GOAWAY(0) at its first request and closes
//	-mode goaway-reset  GOAWAY(last-stream-id = the request's stream), then a reset (RST)
//	-mode reset         the connection is reset (RST) at the first request
//	-mode goaway-start  the first connection sends GOAWAY(0) right after its SETTINGS,
//	                    before any request, and stays open; later connections answer
//
// It listens on 127.0.0.1, prints the port on its first line of stdout, and
// stops when stdin closes. Connections it accepted are counted on stderr.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

func main() {
	mode := flag.String("mode", "goaway-first", "")
	flag.Parse()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(lis.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	var conns atomic.Int32
	for {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		n := conns.Add(1)
		fmt.Fprintf(os.Stderr, "connection %d\n", n)
		go serve(c.(*net.TCPConn), *mode, n == 1)
	}
}

func serve(c *net.TCPConn, mode string, first bool) {
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	_ = fr.WriteSettings()
	if mode == "goaway-start" && first {
		_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.HeadersFrame:
			if drop(fr, c, mode, first, f.StreamID) {
				return
			}
			if (mode == "goaway-first" || mode == "goaway-start") && first {
				continue
			}
			reply(fr, f.StreamID)
		}
	}
}

// drop acts out the mode at a request; true when the connection is to close.
func drop(fr *http2.Framer, c *net.TCPConn, mode string, first bool, id uint32) bool {
	switch mode {
	case "goaway-first":
		if first {
			_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		}
		return false
	case "goaway-all":
		_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		time.Sleep(50 * time.Millisecond)
		return true
	case "goaway-reset":
		_ = fr.WriteGoAway(id, http2.ErrCodeNo, nil)
		time.Sleep(50 * time.Millisecond)
		_ = c.SetLinger(0)
		return true
	case "reset":
		_ = c.SetLinger(0)
		return true
	}
	return false
}

func reply(fr *http2.Framer, id uint32) {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true})
	_ = fr.WriteData(id, false, []byte{0, 0, 0, 0, 2, 0x08, 1})
	block.Reset()
	_ = enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true, EndStream: true})
}
