package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
)

// helpers are programs the checks run inside the sandbox, as
// `fbvm-check NAME ARGS...`: the guest has busybox and this binary, and
// nothing else to attack with.
var helpers = map[string]func(args []string) int{
	"hog": hog,
}

// hog allocates MiB mebibytes, one at a time, touching every page so that
// the kernel charges it, and prints the running total after each one. It
// prints "survived" if nothing stopped it.
func hog(args []string) int {
	mib := 256
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "usage: fbvm-check hog MIB\n")
			return 2
		}
		mib = n
	}
	debug.SetGCPercent(-1) // everything stays referenced anyway
	keep := make([][]byte, 0, mib)
	for i := 1; i <= mib; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		keep = append(keep, b)
		fmt.Printf("%d\n", i)
	}
	fmt.Println("survived")
	return 0
}
