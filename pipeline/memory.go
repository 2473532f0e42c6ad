package pipeline

import (
	"math"
	"os"
	"runtime/debug"
)

// goMemoryLimit is the soft limit of Go's memory while a run or a replay
// works, unless GOMEMLIMIT sets one. Beside DuckDB's buffer pool (384 MB,
// 512 while the rules run: sql.OpenDB) it keeps a 1M-payment day under
// 1 GiB: the load's parse holds 120-190 MB live, and with GOGC's default
// alone the heap grew to 365 MB before a collection (docs/performance.md).
// Past the limit the collector runs more often; it never fails an
// allocation.
const goMemoryLimit = 256 << 20

// limitGoMemory sets goMemoryLimit when no limit is set and returns what
// restores the one before.
func limitGoMemory() (restore func()) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 { // GOMEMLIMIT or the program set one
		return func() {}
	}
	prev := debug.SetMemoryLimit(goMemoryLimit)
	return func() { debug.SetMemoryLimit(prev) }
}

// collectAtLimit turns GOGC's proportional collection off while the
// extract works, when the limit in force is goMemoryLimit and GOGC is not
// set, and returns what turns it back. The extract holds little (tens of
// MB) while it allocates every page it fetches, so GOGC's default
// collected every few tens of MB: a quarter of its CPU on a 1M-payment day.
// The heap now grows to the limit, where the collector runs
// (docs/performance.md).
func collectAtLimit() (restore func()) {
	if debug.SetMemoryLimit(-1) != goMemoryLimit || os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(prev) }
}
