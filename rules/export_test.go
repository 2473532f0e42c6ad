package rules

import "testing"

// SetMemoryLimit sets DuckDB's memory limit of the rules for the test.
func SetMemoryLimit(t *testing.T, limit string) {
	prev := memoryLimit
	memoryLimit = limit
	t.Cleanup(func() { memoryLimit = prev })
}

// SetEventChunk sets how many events one statement looks up or inserts.
func SetEventChunk(t *testing.T, n int) {
	prev := eventChunk
	eventChunk = n
	t.Cleanup(func() { eventChunk = prev })
}
