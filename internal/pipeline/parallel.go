package pipeline

import (
	"errors"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// batchSize is how many cases a worker judges and prepares at once; a batch is handed on earlier once its
// responses hold batchBytes.
const (
	batchSize  = 256
	batchBytes = 4 << 20
)

// maxPreallocBytes bounds the buffer a worker reserves for a batch from the size of its previous one.
const maxPreallocBytes = 1 << 20

// maxInFlightBytes bounds the bytes of the responses claimed but not yet committed, whatever the number of workers
// and the length of the lines: the source waits while it is reached (a single larger response still passes, alone).
// With 16 MiB lines, each line's response, judgement and encoded result are alive together until committed.
const maxInFlightBytes = 16 << 20

// parallel judges and prepares claimed cases on several goroutines and commits them in the order they were
// claimed. Memory stays bounded: at most a few batches are in flight.
type parallel[T any] struct {
	r          *run
	sink       Sink[T]
	batch      []Case
	batchBytes int64
	// inFlight is acquired for each claimed response's size and released once its batch is committed.
	inFlight *semaphore.Weighted
	jobs     chan job[T]
	pending  chan chan outcome[T]
	done     chan error
	failed   chan struct{}
	// Spare batch slices and buffers, handed back once a batch is judged (cases) or committed (items, buffers),
	// so that a run allocates them once per batch in flight rather than once per batch. At most a few batches are
	// in flight, so each list's capacity is never reached but by a race that costs only an allocation.
	spareCases chan []Case
	spareItems chan []prepared[T]
	spareBufs  chan []byte
}

type job[T any] struct {
	cases []Case
	bytes int64
	out   chan outcome[T]
}

// prepared is a judged case ready to commit: the sink's value and what the summary needs of the judgement.
type prepared[T any] struct {
	res verdict.CaseResult
	v   T
}

type outcome[T any] struct {
	items []prepared[T]
	buf   []byte
	bytes int64
	err   error
}

func startParallel[T any](r *run, sink Sink[T], workers int) *parallel[T] {
	spares := 4*workers + 4
	p := &parallel[T]{
		r:          r,
		sink:       sink,
		jobs:       make(chan job[T], workers),
		pending:    make(chan chan outcome[T], 2*workers),
		done:       make(chan error, 1),
		failed:     make(chan struct{}),
		inFlight:   semaphore.NewWeighted(maxInFlightBytes),
		spareCases: make(chan []Case, spares),
		spareItems: make(chan []prepared[T], spares),
		spareBufs:  make(chan []byte, spares),
	}
	for range workers {
		go p.work()
	}
	go func() {
		var err error
		for out := range p.pending {
			o := <-out
			p.inFlight.Release(o.bytes)
			if err != nil {
				continue
			}
			if err = o.err; err == nil {
				for _, pc := range o.items {
					if err = commit(r, sink, pc); err != nil {
						break
					}
				}
			}
			if err != nil {
				close(p.failed)
				continue
			}
			// Committed: the sink holds nothing of the batch's buffer or items any more.
			giveBack(p.spareItems, clearSlice(o.items))
			if cap(o.buf) <= maxPreallocBytes {
				giveBack(p.spareBufs, o.buf[:0])
			}
		}
		p.done <- err
	}()
	return p
}

// judgeAll judges the cases of a batch, CaseParallelism at once.
func judgeAll(r *run, cases []Case) {
	n := r.in.CaseParallelism
	if n <= 1 || len(cases) <= 1 {
		for i := range cases {
			r.judge(&cases[i])
		}
		return
	}
	var g errgroup.Group
	g.SetLimit(n)
	for i := range cases {
		g.Go(func() error {
			r.judge(&cases[i])
			return nil
		})
	}
	_ = g.Wait() // r.judge reports through the case; no task fails
}

// work judges and prepares batches until the jobs end.
func (p *parallel[T]) work() {
	// Each batch's prepared bytes share one buffer: one allocation per batch in flight instead of one per case. A
	// buffer lives until its batch is committed, then serves another batch.
	bufBytes := 0
	for j := range p.jobs {
		var o outcome[T]
		o.items = takeSpare(p.spareItems, len(j.cases))
		buf := takeSpare(p.spareBufs, 0)
		if buf == nil {
			// Sized from the previous batch, capped: after a batch of long lines, a worker's next buffer must not
			// reserve their size again (with many workers that would follow the core count).
			buf = make([]byte, 0, min(bufBytes+bufBytes/8, maxPreallocBytes))
		}
		if err := p.r.waitFile(); err != nil {
			o.err = err
		} else {
			judgeAll(p.r, j.cases)
		}
		for _, c := range j.cases {
			if o.err != nil {
				break
			}
			pc, err := prepareJudged(p.sink, &buf, c)
			if err != nil {
				o.err = err
				break
			}
			o.items = append(o.items, pc)
		}
		bufBytes = len(buf)
		giveBack(p.spareCases, clearSlice(j.cases))
		o.buf, o.bytes = buf, j.bytes
		j.out <- o
	}
}

// takeSpare returns a spare slice of at least n capacity, emptied, or a new one (nil when n is 0).
func takeSpare[E any](spares chan []E, n int) []E {
	select {
	case s := <-spares:
		if cap(s) >= n {
			return s[:0]
		}
	default:
	}
	if n == 0 {
		return nil
	}
	return make([]E, 0, n)
}

// giveBack keeps a slice for reuse, unless enough are kept already.
func giveBack[E any](spares chan []E, s []E) {
	if cap(s) == 0 {
		return
	}
	select {
	case spares <- s:
	default:
	}
}

// clearSlice zeroes s (so that a spare holds no pointers into what it held) and returns it empty.
func clearSlice[E any](s []E) []E {
	clear(s)
	return s[:0]
}

// prepareOne judges a case and lets the sink prepare it; safe for concurrent use.
func prepareOne[T any](r *run, sink Sink[T], buf *[]byte, c Case) (prepared[T], error) {
	r.judge(&c)
	return prepareJudged(sink, buf, c)
}

// prepareJudged lets the sink prepare a judged case; safe for concurrent use.
func prepareJudged[T any](sink Sink[T], buf *[]byte, c Case) (prepared[T], error) {
	v, err := sink.Prepare(buf, c)
	if err != nil {
		return prepared[T]{}, err
	}
	res := c.Result
	res.Evaluators = nil // the summary needs only the verdict and score
	return prepared[T]{res: res, v: v}, nil
}

// commit adds a prepared case to the summary and commits it to the sink, in order.
func commit[T any](r *run, sink Sink[T], pc prepared[T]) error {
	if r.in.judging() {
		r.summary.Add(pc.res)
	}
	return sink.Commit(pc.v)
}

// commitOne prepares and commits one case on the calling goroutine (the missing cases, after the workers ended).
func commitOne[T any](r *run, sink Sink[T], c Case) error {
	var buf []byte
	pc, err := prepareOne(r, sink, &buf, c)
	if err != nil {
		return err
	}
	return commit(r, sink, pc)
}

// add hands a claimed case to the workers (the source's callback, on one goroutine). It waits while the responses
// in flight hold maxInFlightBytes, handing on its own batch first so that the wait always ends.
func (p *parallel[T]) add(c Case) error {
	n := min(responseBytes(c.Response), maxInFlightBytes)
	if !p.inFlight.TryAcquire(n) {
		if err := p.flush(); err != nil {
			return err
		}
		if err := p.inFlight.Acquire(p.r.ctx, n); err != nil {
			return err
		}
	}
	if p.batch == nil {
		p.batch = takeSpare(p.spareCases, batchSize)
	}
	p.batch = append(p.batch, c)
	p.batchBytes += n
	if len(p.batch) < batchSize && p.batchBytes < batchBytes {
		return nil
	}
	return p.flush()
}

// responseBytes estimates the memory a response holds: its answer, trace and output messages.
func responseBytes(r *jsonlresult.Response) int64 {
	if r == nil {
		return 0
	}
	n := len(r.Text)
	for _, e := range r.Trace {
		n += len(e.Raw)
	}
	for _, msgs := range [...][]jsonlresult.OutputMessage{r.OutputMessages, r.Output} {
		for _, m := range msgs {
			n += len(m.Content) + len(m.Metadata)
			for _, tc := range m.ToolCalls {
				n += len(tc.Input) + len(tc.Output)
			}
		}
	}
	return int64(n)
}

func (p *parallel[T]) flush() error {
	if len(p.batch) == 0 {
		return nil
	}
	out := make(chan outcome[T], 1)
	select {
	case p.pending <- out:
	case <-p.failed:
		return errors.New("judging the results failed")
	}
	p.jobs <- job[T]{cases: p.batch, bytes: p.batchBytes, out: out}
	p.batch, p.batchBytes = nil, 0
	return nil
}

// finish commits what is left and returns the first error.
func (p *parallel[T]) finish() error {
	ferr := p.flush()
	close(p.jobs)
	close(p.pending)
	if err := <-p.done; err != nil {
		return err
	}
	return ferr
}
