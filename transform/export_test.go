package transform

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs the package's tests with every freed Arrow buffer poisoned
// (poisonFreed); benchmarks run as the loader does.
func TestMain(m *testing.M) {
	flag.Parse()
	poisonFreed = flag.Lookup("test.bench").Value.String() == ""
	os.Exit(m.Run())
}

// SetPairPart makes report loads pair their rows in parts of n rows, until
// the test ends.
func SetPairPart(t testing.TB, n int64) {
	old := pairPart
	pairPart = n
	t.Cleanup(func() { pairPart = old })
}

// SetMaxRejected makes a builder take its file for unreadable past rows
// rejected rows or mib MiB of their text, until the test ends.
func SetMaxRejected(t testing.TB, rows, mib int) {
	old := maxRejected
	maxRejected.rows, maxRejected.mib = rows, mib
	t.Cleanup(func() { maxRejected = old })
}
