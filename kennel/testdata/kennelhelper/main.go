// Command kennelhelper is a test program for the kennel tests, installed in the
// test image as /usr/local/bin/kennel-helper.
//
//	kennel-helper argv ARGS...   print the argument count, then each argument in hex
//	kennel-helper flood BYTES    write BYTES bytes of 100-byte lines to stdout
//	kennel-helper stubborn MARK  ignore SIGINT, start "hang MARK" in a session of
//	                             its own, print "ready", wait forever
//	kennel-helper hang MARK      ignore SIGINT, wait forever
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// forever blocks (a bare select{} would be reported as a deadlock).
func forever() {
	for {
		time.Sleep(time.Hour)
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kennel-helper argv|flood|stubborn|hang ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "argv":
		fmt.Printf("argc=%d\n", len(os.Args)-2)
		for _, a := range os.Args[2:] {
			fmt.Println(hex.EncodeToString([]byte(a)))
		}
	case "flood":
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		line := []byte("0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopq\n")
		for n >= len(line) {
			w.Write(line)
			n -= len(line)
		}
		w.Write(line[len(line)-n:])
		if err := w.Flush(); err != nil {
			os.Exit(1)
		}
	case "stubborn":
		signal.Ignore(syscall.SIGINT)
		cmd := exec.Command(os.Args[0], "hang", os.Args[2])
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ready")
		forever()
	case "hang":
		signal.Ignore(syscall.SIGINT)
		forever()
	default:
		fmt.Fprintf(os.Stderr, "kennel-helper: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}
