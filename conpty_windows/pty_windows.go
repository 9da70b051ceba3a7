package conpty

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/windows"
)

// ErrNoConPTY: this Windows has no pseudo consoles (before 10 1809).
var ErrNoConPTY = errors.New("this Windows has no pseudo consoles (ConPTY needs Windows 10 1809 or later)")

// PTY is a pseudo console: the command's console, whose input forgebox
// writes and whose output (text with VT sequences) forgebox reads.
// https://learn.microsoft.com/windows/console/creating-a-pseudoconsole-session
type PTY struct {
	hpc windows.Handle
	in  *os.File // write end of the console's input
	out *os.File // read end of the console's output

	closeOnce sync.Once
}

// NewPTY creates a pseudo console of cols x rows cells with its two pipes.
func NewPTY(cols, rows int16) (*PTY, error) {
	if !HasConPTY() {
		return nil, ErrNoConPTY
	}
	if cols <= 0 || rows <= 0 {
		cols, rows = 80, 24
	}
	var inR, inW, outR, outW windows.Handle
	if err := windows.CreatePipe(&inR, &inW, nil, 0); err != nil {
		return nil, fmt.Errorf("create the console's input pipe: %w", err)
	}
	if err := windows.CreatePipe(&outR, &outW, nil, 0); err != nil {
		windows.CloseHandle(inR)
		windows.CloseHandle(inW)
		return nil, fmt.Errorf("create the console's output pipe: %w", err)
	}
	var hpc windows.Handle
	err := windows.CreatePseudoConsole(windows.Coord{X: cols, Y: rows}, inR, outW, 0, &hpc)
	// The console has its own copies of its ends: ours go, so that the
	// output reads end of file once the console is closed.
	windows.CloseHandle(inR)
	windows.CloseHandle(outW)
	if err != nil {
		windows.CloseHandle(inW)
		windows.CloseHandle(outR)
		return nil, fmt.Errorf("CreatePseudoConsole: %w", err)
	}
	return &PTY{hpc: hpc, in: os.NewFile(uintptr(inW), "conpty-input"), out: os.NewFile(uintptr(outR), "conpty-output")}, nil
}

// Input is where the command's keyboard input is written.
func (p *PTY) Input() *os.File { return p.in }

// Output is where the console's rendering is read. It reads end of file
// once the console is closed and everything it wrote has been read.
func (p *PTY) Output() *os.File { return p.out }

// Handle is the HPCON, for PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE.
func (p *PTY) Handle() windows.Handle { return p.hpc }

// Resize changes the console's size (ResizePseudoConsole).
func (p *PTY) Resize(cols, rows int16) error {
	if cols <= 0 || rows <= 0 {
		return nil
	}
	return windows.ResizePseudoConsole(p.hpc, windows.Coord{X: cols, Y: rows})
}

// CloseConsole closes the pseudo console: its processes lose their console
// and the output ends. On some Windows versions ClosePseudoConsole waits
// until the console's last output has been read: keep reading Output while
// it runs.
func (p *PTY) CloseConsole() {
	p.closeOnce.Do(func() {
		windows.ClosePseudoConsole(p.hpc)
		p.in.Close()
	})
}

// Close closes the console and both pipes.
func (p *PTY) Close() error {
	p.CloseConsole()
	return p.out.Close()
}
