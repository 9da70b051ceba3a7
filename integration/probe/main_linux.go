package main

import (
	"fmt"
	"os"

	"github.com/forgebox/forgebox/probe"
)

func main() {
	if err := probe.Main(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}
