// SPDX-License-Identifier: GPL-2.0
//
// A Go program for the unwinder: goroutines spinning (main.worker, which
// Go starts on a stack that ends at runtime.goexit), main spinning on
// the main goroutine, the runtime's own threads (sysmon) around them.  It
// allocates little: the garbage collector runs on each thread's system
// stack (runtime.systemstack), where a CFI walk ends at the switch of
// stacks, short of the goroutine's frames.  Built at test time with the
// Go toolchain (tests/integration/test_cfi_go.sh).
// Usage: goload [SECONDS, default 1]
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func spin(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func worker(id int, until time.Time, wg *sync.WaitGroup, out *uint64) {
	defer wg.Done()
	var x uint64
	for time.Now().Before(until) {
		x += spin(200000 + id)
	}
	*out = x
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	until := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var wg sync.WaitGroup
	outs := make([]uint64, 2)
	for i := range outs {
		wg.Add(1)
		go worker(i, until, &wg, &outs[i])
	}
	for time.Now().Before(until) {
		sink += spin(100000)
	}
	wg.Wait()
	sink += outs[0] + outs[1]
}
