// Listening inside another network namespace. A socket belongs to the network
// namespace of the thread that created it, so each listen runs on a goroutine
// locked to its own OS thread that enters the pod's namespace, creates the
// sockets and goes back, as CNI plugins do. If going back fails, the goroutine
// returns still locked, and the Go runtime then destroys that thread instead of
// reusing it: a thread in the wrong namespace never runs other code.
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// inNetns runs fn with the calling thread inside the namespace at path ("" = here).
func inNetns(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread unless the thread is back home (see the file comment).
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{fmt.Errorf("open own netns: %w", err)}
			return
		}
		defer home.Close()
		target, err := os.Open(path)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{fmt.Errorf("open netns %s: %w", path, err)}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{fmt.Errorf("setns %s: %w", path, err)}
			return
		}
		ferr := fn()
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{fmt.Errorf("setns back from %s: %w (thread discarded)", path, err)}
			return
		}
		runtime.UnlockOSThread()
		done <- result{ferr}
	}()
	return (<-done).err
}

// listenTCP opens a TCP listener on ip:port inside the namespace at netns ("" = here).
func listenTCP(netns, ip string, port int) (net.Listener, error) {
	var l net.Listener
	err := inNetns(netns, func() error {
		var err error
		l, err = net.Listen("tcp4", net.JoinHostPort(ip, fmt.Sprint(port)))
		return err
	})
	return l, err
}
