package bench

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// statusRSS reads VmRSS and VmHWM (bytes) from a /proc/<pid>/status.
func statusRSS(status []byte) (rss, hwm int64) {
	for _, l := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// procSample is a child's CPU time, RSS and peak RSS so far at one instant.
type procSample struct {
	at       time.Time
	cpu      time.Duration
	rss, hwm int64 // bytes
}

type procSeries []procSample

// peakMiB is the highest peak RSS sampled.
func (s procSeries) peakMiB() float64 {
	var hwm int64
	for _, x := range s {
		hwm = max(hwm, x.hwm)
	}
	return float64(hwm) / (1 << 20)
}

// during returns the CPU seconds used and the highest RSS (MiB) sampled
// between from and to.
func (s procSeries) during(from, to time.Time) (cpu, rssMiB float64) {
	var first, last *procSample
	for i := range s {
		if s[i].at.Before(from) || s[i].at.After(to) {
			continue
		}
		if first == nil {
			first = &s[i]
		}
		last = &s[i]
		rssMiB = max(rssMiB, float64(s[i].rss)/(1<<20))
	}
	if first != nil {
		cpu = (last.cpu - first.cpu).Seconds()
	}
	return cpu, rssMiB
}

// sampleProc samples /proc/pid every 50 ms until the returned function is
// called, which returns the samples.
func sampleProc(pid int) func() procSeries {
	stop := make(chan struct{})
	var (
		mu     sync.Mutex
		series procSeries
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if s, ok := readProc(pid); ok {
				mu.Lock()
				series = append(series, s)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() procSeries {
		close(stop)
		wg.Wait()
		return series
	}
}
