package evalfile

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// Reading a large file, most of the work is per item and independent of the other items: reading its text into values
// (yamltree.ReadItem) and validating the case. An item reader does that work for batches of items on several
// goroutines, ahead of the one goroutine that adds the cases to the File in order (the only part that depends on the
// items before: duplicate ids, the tree's value count, the order of problems). Items yamltree.ReadItem does not read
// are left to that goroutine, which reads them from their YAML nodes as before.

// itemBatch is how many items a reader goroutine takes at a time.
const itemBatch = 256

// maxItemBatchesAhead bounds the batches read ahead of the cases added, per reader goroutine.
const maxItemBatchesAhead = 4

// readItem is what an item reader made of one item.
type readItem struct {
	// read says yamltree.ReadItem read the item; the rest is set only then.
	read bool
	// nodes counts the item's values as the tree builder does.
	nodes int
	// caseProblems are the problems of the case itself (evalCase's); isCase says it is a case at all (a mapping).
	caseProblems []Problem
	isCase       bool
	// id is the case's id when valid ("" otherwise), idLine the line of its value.
	id     string
	idLine int
	// evaluatorProblems are the problems of the case's evaluators (resolveEvaluators').
	evaluatorProblems []Problem
	// start, end and line place the item's text; inherits is caseEntry.inherits.
	start, end, line int32
	inherits         uint8
	// load is what judging the case takes (Scan's facts).
	load caseLoad
}

type itemBatchState struct {
	done  chan struct{}
	items []readItem
}

// itemReader reads and validates items ahead of next.
type itemReader struct {
	sg      *segmented
	f       *File
	batches []itemBatchState
	// taken counts the batches handed to goroutines; slots bounds the batches read ahead (nil: next reads each
	// batch itself); stopped ends the goroutines (stop).
	taken   atomic.Int64
	slots   *semaphore.Weighted
	stopped context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	current int // the batch next is in, -1 before the first
	// arena serves next when it reads batches itself.
	arena yamltree.Arena
}

// startItems starts reading sg's items for f (whose header is complete), or returns nil when the text is too large
// to place items with 32-bit offsets.
func startItems(sg *segmented, f *File) *itemReader {
	if len(sg.data) > math.MaxInt32 {
		return nil
	}
	n := (len(sg.items) + itemBatch - 1) / itemBatch
	r := &itemReader{sg: sg, f: f, batches: make([]itemBatchState, n), current: -1}
	r.stopped, r.cancel = context.WithCancel(context.Background())
	for b := range r.batches {
		r.batches[b].done = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		return r // next reads each batch itself when it reaches it
	}
	r.slots = semaphore.NewWeighted(int64(workers * maxItemBatchesAhead))
	r.wg.Add(workers)
	for range workers {
		go r.work(&yamltree.Arena{})
	}
	return r
}

// work reads batches in order until there are none left or the reader stops.
func (r *itemReader) work(a *yamltree.Arena) {
	defer r.wg.Done()
	for {
		// Acquire fails once the reader stopped, even with a slot free.
		if r.slots.Acquire(r.stopped, 1) != nil {
			return
		}
		b := int(r.taken.Add(1) - 1)
		if b >= len(r.batches) {
			return
		}
		r.readBatch(a, b)
	}
}

func (r *itemReader) readBatch(a *yamltree.Arena, b int) {
	lo := b * itemBatch
	hi := min(lo+itemBatch, len(r.sg.items))
	items := make([]readItem, hi-lo)
	for i := lo; i < hi; i++ {
		span := r.sg.items[i]
		readOne(a, r.sg.src, span[0], span[1], r.sg.itemLines[i], r.sg.indent, r.f, i, &items[i-lo])
	}
	r.batches[b].items = items
	close(r.batches[b].done)
}

// next returns what was read of item i; items are asked for in order.
func (r *itemReader) next(i int) *readItem {
	b := i / itemBatch
	if b != r.current {
		if r.current >= 0 {
			r.batches[r.current].items = nil
			if r.slots != nil {
				r.slots.Release(1)
			}
		}
		r.current = b
		if r.slots == nil {
			r.readBatch(&r.arena, b)
		}
		<-r.batches[b].done
	}
	return &r.batches[b].items[i-b*itemBatch]
}

// stop ends the reader's goroutines and waits for them.
func (r *itemReader) stop() {
	r.cancel()
	r.wg.Wait()
}

// readOne reads item i, the text src[start:end] whose first line is line and whose dash is at column indent, with
// yamltree.ReadItem, and validates its case as caseAdder.add would, keeping the problems apart. r.read is false when
// yamltree.ReadItem declines the item.
func readOne(a *yamltree.Arena, src string, start, end, line, indent int, f *File, i int, r *readItem) {
	v, nodes, ok := yamltree.ReadItem(a, src, start, end, line, indent)
	if !ok {
		return
	}
	r.read, r.nodes = true, nodes
	r.start, r.end, r.line = int32(start), int32(end), int32(line)
	p := Parser{Reader: yamltree.Reader{ValidateOnly: true}}
	path := casePath(i)
	c := p.evalCase(v, i, path)
	r.caseProblems = p.Problems
	if c == nil {
		return
	}
	r.isCase = true
	if c.ID != "" {
		r.id, r.idLine = c.ID, v.Get("id").Line
	}
	p.Problems = nil
	p.resolveEvaluators(f, c, v, path)
	r.evaluatorProblems = p.Problems
	r.inherits = inheritance(c)
	r.load = loadOf(c.Evaluators)
}

// rebuild builds case i again from its text, as readOne built it when the file was read (valid, since the File
// exists).
func (f *File) rebuild(e *caseEntry, i int) *Case {
	a := arenas.Get().(*yamltree.Arena)
	defer arenas.Put(a)
	v, _, ok := yamltree.ReadItem(a, f.src, int(e.start), int(e.end), int(e.line), f.indent)
	if !ok {
		panic("evalfile: the text of a case that was read no longer reads")
	}
	var p Parser
	path := casePath(i)
	c := p.evalCase(v, i, path)
	p.resolveEvaluators(f, c, v, path)
	return c
}

// arenas serve rebuild and AppendCaseView, which may run on many goroutines at once.
var arenas = sync.Pool{New: func() any { return new(yamltree.Arena) }}
