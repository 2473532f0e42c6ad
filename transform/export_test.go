package transform

import "testing"

// SetPairPart makes report loads pair their rows in parts of n rows, until
// the test ends.
func SetPairPart(t testing.TB, n int64) {
	old := pairPart
	pairPart = n
	t.Cleanup(func() { pairPart = old })
}

// SetMaxRejected makes a builder take its file for unreadable past n
// rejected rows, until the test ends.
func SetMaxRejected(t testing.TB, n int) {
	old := maxRejected
	maxRejected = n
	t.Cleanup(func() { maxRejected = old })
}
