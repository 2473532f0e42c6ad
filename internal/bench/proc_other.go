//go:build !linux

package bench

import "time"

// PeakRSS is this process's peak resident set size in bytes; 0: only Linux's /proc says.
func PeakRSS() int64 { return 0 }

// selfCPU is 0: the harness reads CPU time with getrusage on Linux only.
func selfCPU() time.Duration { return 0 }

// readProc finds no samples: they come from /proc.
func readProc(int) (procSample, bool) { return procSample{}, false }

// host does not know the CPU model and memory.
func host() (model string, memGiB float64) { return "", 0 }
