// pause: the sandbox ("infra") container of the real nodes' pods
// (docs/adr/0047-real-nodes.md), doing what Kubernetes' build/pause/linux/pause.c
// does: hold the pod's namespaces open, reap the zombies it inherits as PID 1 of
// a shared PID namespace, and exit 0 on SIGINT or SIGTERM. Static Go (no libc), so
// the image is this one file.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (outprobe, Go)")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", s)
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
