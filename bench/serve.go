package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveBench measures the agent interface: the round trip of
// run_shell_command `true` through forgebox serve against the same command
// with forgebox run --json (goal: within 1.5x), interleaved, with bwrap in
// the same run for scale; and, when the server has shell sessions, shell_exec
// `true` in a warm session (goal: under 20 ms). With a baseline binary,
// its server answers the same call in the same rounds, for the ratio of
// this build's round trip to that one's.
func serveBench(dir, bin, baseline string, n int) {
	ctx := context.Background()
	call := connect(ctx, dir, bin)
	var callBase func(string, map[string]any) (*mcp.CallToolResult, float64)
	if baseline != "" {
		callBase = connect(ctx, dir, baseline)
	}
	cli := []string{bin, "run", "--json", "--no-stdin", "--", "true"}
	bwrap := []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"}
	const warmup = 10
	var server, direct, bw, ratio, base, vsBase []float64
	for i := 0; i < n+warmup; i++ {
		_, s := call("run_shell_command", map[string]any{"command": "true"})
		d := timeRun(dir, cli)
		b := timeRun(dir, bwrap)
		if i >= warmup {
			server, direct, bw, ratio = append(server, s), append(direct, d), append(bw, b), append(ratio, s/d)
		}
		if callBase != nil {
			_, o := callBase("run_shell_command", map[string]any{"command": "true"})
			if i >= warmup {
				base, vsBase = append(base, o), append(vsBase, s/o)
			}
		}
	}
	fmt.Printf("\nagent interface, %d interleaved rounds\n", n)
	fmt.Printf("  run_shell_command true via forgebox serve  median %6.2f ms  p99 %6.2f ms\n", pct(server, 50), pct(server, 99))
	fmt.Printf("  forgebox run --json -- true                median %6.2f ms  p99 %6.2f ms\n", pct(direct, 50), pct(direct, 99))
	fmt.Printf("  bwrap ... true                             median %6.2f ms\n", pct(bw, 50))
	fmt.Printf("  server / CLI: median of round ratios %.3f (goal <= 1.5); server / bwrap %.2f\n", pct(ratio, 50), pct(server, 50)/pct(bw, 50))
	if callBase != nil {
		fmt.Printf("  the same via the baseline's forgebox serve median %6.2f ms  p99 %6.2f ms\n", pct(base, 50), pct(base, 99))
		fmt.Printf("  this build / baseline: median of round ratios %.3f (goal <= 1)\n", pct(vsBase, 50))
	}

	res, _ := call("shell_start", map[string]any{})
	id, _ := res.StructuredContent.(map[string]any)["session"].(string)
	var baseID string
	if callBase != nil {
		res, _ := callBase("shell_start", map[string]any{})
		baseID, _ = res.StructuredContent.(map[string]any)["session"].(string)
	}
	var exec, execBase, execRatio []float64
	// Each round alternates which server goes first: the second call of a
	// round finds the machine just woken by the first.
	for i := 0; i < n+warmup; i++ {
		var t, o float64
		if callBase != nil && i%2 == 1 {
			_, o = callBase("shell_exec", map[string]any{"session": baseID, "command": "true"})
		}
		_, t = call("shell_exec", map[string]any{"session": id, "command": "true"})
		if callBase != nil && i%2 == 0 {
			_, o = callBase("shell_exec", map[string]any{"session": baseID, "command": "true"})
		}
		if i < warmup {
			continue
		}
		exec = append(exec, t)
		if callBase != nil {
			execBase, execRatio = append(execBase, o), append(execRatio, t/o)
		}
	}
	call("shell_close", map[string]any{"session": id})
	fmt.Printf("  shell_exec true in a warm session          median %6.2f ms  p99 %6.2f ms (goal < 20 ms)\n", pct(exec, 50), pct(exec, 99))
	if callBase != nil {
		callBase("shell_close", map[string]any{"session": baseID})
		fmt.Printf("  the same in the baseline's server          median %6.2f ms  p99 %6.2f ms; this build / baseline: median of round ratios %.3f\n",
			pct(execBase, 50), pct(execBase, 99), pct(execRatio, 50))
	}
}

// connect starts bin's MCP server on dir and returns a call that times one
// tool call; the server ends with the benchmark.
func connect(ctx context.Context, dir, bin string) func(string, map[string]any) (*mcp.CallToolResult, float64) {
	cmd := exec.Command(bin, "serve", "--workspace", dir)
	cmd.Dir = dir
	client := mcp.NewClient(&mcp.Implementation{Name: "forgebox-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fail("connect to forgebox serve: " + err.Error())
	}
	return func(name string, args map[string]any) (*mcp.CallToolResult, float64) {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		took := float64(time.Since(start).Microseconds()) / 1000
		if err != nil || res.IsError {
			fail(fmt.Sprintf("%s %v: %v %+v", name, args, err, res))
		}
		return res, took
	}
}
