package jsonlresult

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// The reference workload: 100,000 records of about 1,260 bytes (126 MB), each with an id, a text of about 150
// characters, 3 trace events, and output_messages with 3 tool calls carrying small input/output objects and a final
// assistant message with structured content. It is generated deterministically into a temporary file once per
// test binary run, so that the input itself does not count against the parser's heap.
const workloadRecords = 100_000

var workload struct {
	once sync.Once
	dir  string
	path string
	size int64
	ids  []string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if workload.dir != "" {
		_ = os.RemoveAll(workload.dir)
	}
	os.Exit(code)
}

func workloadFile(b *testing.B) (path string, size int64, ids []string) {
	b.Helper()
	workload.once.Do(func() {
		workload.dir, workload.err = os.MkdirTemp("", "jsonlresult-bench-")
		if workload.err != nil {
			return
		}
		workload.path = filepath.Join(workload.dir, "results.jsonl")
		f, err := os.Create(workload.path)
		if err != nil {
			workload.err = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		workload.ids = writeWorkload(w, workloadRecords)
		if err := w.Flush(); err != nil {
			workload.err = err
		}
		if err := f.Close(); err != nil && workload.err == nil {
			workload.err = err
		}
		if st, err := os.Stat(workload.path); err == nil {
			workload.size = st.Size()
		}
	})
	if workload.err != nil {
		b.Fatalf("generating the workload: %v", workload.err)
	}
	return workload.path, workload.size, workload.ids
}

var (
	benchWords = strings.Fields("the screening check found no match against the sanctions list and the " +
		"customer record is consistent with prior reviews; amount within threshold, jurisdiction AU, " +
		"risk score low — décision: CLEAR after \"manual\" review of 3 sources")
	benchTools = []string{"search_registry", "fetch_profile", "score_risk"}
)

// writeWorkload writes n records and returns their ids.
func writeWorkload(w io.Writer, n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, n)
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	for i := range n {
		id := fmt.Sprintf("case-%06d", i)
		ids[i] = id
		var text strings.Builder
		for text.Len() < 150 {
			text.WriteString(benchWords[rng.IntN(len(benchWords))])
			text.WriteByte(' ')
		}
		ts := func(k int) string {
			return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i*1000+k) * time.Millisecond).
				Format(time.RFC3339Nano)
		}
		decision := []string{"CLEAR", "REVIEW", "BLOCK"}[rng.IntN(3)]
		var b strings.Builder
		fmt.Fprintf(&b, `{"id":%s,"text":%s,"trace":[`, enc(id), enc(text.String()))
		fmt.Fprintf(&b, `{"type":"model_step","timestamp":%q,"id":"step-%d","name":"plan","input":{"prompt_tokens":%d},"output":{"completion_tokens":%d}},`,
			ts(0), i, 200+rng.IntN(800), 10+rng.IntN(90))
		fmt.Fprintf(&b, `{"type":"tool_call","timestamp":%q,"id":"call-%d-0","name":"search_registry","input":{"query":"row %d"}},`,
			ts(1), i, i)
		fmt.Fprintf(&b, `{"type":"tool_result","timestamp":%q,"id":"call-%d-0","output":{"hits":%d}}],`,
			ts(2), i, rng.IntN(4))
		b.WriteString(`"output_messages":[{"role":"assistant","tool_calls":[`)
		for k, tool := range benchTools {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"tool":%q,"input":{"id":%q},"output":{"value":%d},"id":"call-%d-%d","timestamp":%q}`,
				tool, id, rng.IntN(100000), i, k, ts(3+k))
		}
		fmt.Fprintf(&b, `]},{"role":"assistant","content":{"decision":%q,"score":%.3f,"reasons":["threshold","jurisdiction AU"]},"timestamp":%q}],`,
			decision, rng.Float64(), ts(9))
		fmt.Fprintf(&b, `"token_usage":{"input":%d,"output":%d},"cost_usd":%.5f,"duration_ms":%d}`+"\n",
			1000+rng.IntN(500), 50+rng.IntN(50), rng.Float64()/100, 500+rng.IntN(2000))
		if _, err := io.WriteString(w, b.String()); err != nil {
			panic(err)
		}
	}
	return ids
}

// heapPeak samples the heap in use (objects plus unused space in in-use spans, like MemStats.HeapInuse) until
// stopped, and returns the maximum it saw.
type heapPeak struct {
	stop chan struct{}
	done chan struct{}
	max  atomic.Uint64
}

func startHeapPeak() *heapPeak {
	h := &heapPeak{stop: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	read := func() {
		metrics.Read(samples)
		if v := samples[0].Value.Uint64() + samples[1].Value.Uint64(); v > h.max.Load() {
			h.max.Store(v)
		}
	}
	read()
	go func() {
		defer close(h.done)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return h
}

func (h *heapPeak) finish() float64 {
	close(h.stop)
	<-h.done
	return float64(h.max.Load()) / (1 << 20)
}

// benchParse runs parse over the workload file and reports throughput, records per second and peak heap.
func benchParse(b *testing.B, parse func(path string, ids []string, fn func(*Response) error) (*BatchResult, error)) {
	path, size, ids := workloadFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	runtime.GC()
	peak := startHeapPeak()
	cpuStart := processCPUTime()
	b.ResetTimer()
	for range b.N {
		var n int
		res, err := parse(path, ids, func(r *Response) error {
			if r.Text == "" || len(r.Trace) != 3 || len(r.OutputMessages) != 2 {
				return fmt.Errorf("line %d: unexpected response shape", r.Line)
			}
			n++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Err(); err != nil || n != len(ids) {
			b.Fatalf("got %d responses, err %v", n, err)
		}
	}
	b.StopTimer()
	// CPU time per parse shows the work done whatever else the machine runs (wall time does not).
	b.ReportMetric(float64(processCPUTime()-cpuStart)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(peak.finish(), "peak-heap-MiB")
	b.ReportMetric(float64(workloadRecords*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkParseBatch measures ParseBatch with its default (parallel) settings. It also reports the peak resident
// set (VmHWM) of a fresh process that parses the workload once.
func BenchmarkParseBatch(b *testing.B) {
	benchParse(b, func(path string, ids []string, fn func(*Response) error) (*BatchResult, error) {
		return ParseBatchFile(path, ids, Options{}, fn)
	})
	reportParseRSS(b, false)
}

// reportParseRSS reports the peak RSS of a child process parsing the workload once, with ParseBatchFile or
// (baseline) baselineParse.
func reportParseRSS(b *testing.B, baseline bool) {
	path, _, _ := workloadFile(b)
	cmd := exec.Command(os.Args[0], "-test.run=^TestParseRSSHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JSONLRESULT_RSS_FILE="+path)
	if baseline {
		cmd.Env = append(cmd.Env, "JSONLRESULT_RSS_BASELINE=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Logf("peak RSS not measured: %v: %s", err, out)
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM-KiB="); ok {
			if kib, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				b.ReportMetric(float64(kib)/1024, "peak-RSS-MiB")
				return
			}
		}
	}
	b.Logf("peak RSS not measured: no VmHWM in %s", out)
}

// TestParseRSSHelper is the child process of reportParseRSS; it does nothing in a normal test run.
func TestParseRSSHelper(t *testing.T) {
	path := os.Getenv("JSONLRESULT_RSS_FILE")
	if path == "" {
		t.Skip("helper process for the parse benchmarks' peak RSS")
	}
	ids := make([]string, workloadRecords)
	for i := range ids {
		ids[i] = fmt.Sprintf("case-%06d", i)
	}
	runtime.GC()
	n := 0
	count := func(*Response) error { n++; return nil }
	var res *BatchResult
	var err error
	if os.Getenv("JSONLRESULT_RSS_BASELINE") != "" {
		f, ferr := os.Open(path)
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer func() { _ = f.Close() }()
		res, err = baselineParse(f, ids, count)
	} else {
		res, err = ParseBatchFile(path, ids, Options{}, count)
	}
	if err != nil || res.Err() != nil || n != len(ids) {
		t.Fatalf("parsed %d responses: %v %v", n, err, res.Err())
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			if _, err := fmt.Printf("VmHWM-KiB=%s\n", strings.TrimSuffix(strings.TrimSpace(v), " kB")); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// BenchmarkParseBatchOneWorker measures the tokenizer alone, on one decoding goroutine.
func BenchmarkParseBatchOneWorker(b *testing.B) {
	benchParse(b, func(path string, ids []string, fn func(*Response) error) (*BatchResult, error) {
		return ParseBatchFile(path, ids, Options{Workers: 1}, fn)
	})
}

// BenchmarkBaseline measures the straightforward implementation of the same contract below.
func BenchmarkBaseline(b *testing.B) {
	benchParse(b, func(path string, ids []string, fn func(*Response) error) (*BatchResult, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		return baselineParse(f, ids, fn)
	})
	reportParseRSS(b, true)
}

// baselineParse is the straightforward implementation the benchmark compares against: bufio.Scanner and
// encoding/json per line, with the same rules as ParseBatch (except invalid UTF-8 handling and the long-line
// limit, which it leaves to encoding/json and the scanner).
func baselineParse(r io.Reader, requested []string, fn func(*Response) error) (*BatchResult, error) {
	h := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(r, h))
	sc.Buffer(make([]byte, 64<<10), DefaultMaxLineBytes)
	index := make(map[string]int, len(requested))
	for i, id := range requested {
		index[id] = i
	}
	seen := make(map[string]int64)
	res := &BatchResult{Requested: len(requested)}
	addErr := func(line int64, text []byte, msg string) {
		res.ParseErrorCount++
		res.ParseErrors = append(res.ParseErrors, LineError{Line: line, Excerpt: textbound.HeadBytes(text, ExcerptBytes), Message: msg})
	}
	var line int64
	for sc.Scan() {
		line++
		text := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if line == 1 {
			text = bytes.TrimPrefix(text, bom)
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(text, &fields); err != nil {
			addErr(line, text, "invalid JSON or not an object: "+err.Error())
			continue
		}
		var id string
		if err := json.Unmarshal(fields["id"], &id); err != nil || strings.TrimSpace(id) == "" {
			addErr(line, text, `"id" is missing, empty or not a string`)
			continue
		}
		if first, dup := seen[id]; dup {
			addErr(line, text, duplicateMessage(id, first))
			continue
		}
		seen[id] = line
		if _, ok := index[id]; !ok {
			res.UnexpectedCount++
			res.UnexpectedIDs = append(res.UnexpectedIDs, id)
			continue
		}
		resp, err := baselineResponse(id, fields)
		if err != nil {
			return nil, err
		}
		resp.Line = line
		res.Present++
		if err := fn(resp); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, id := range requested {
		if _, ok := seen[id]; !ok {
			res.MissingCount++
			res.MissingIDs = append(res.MissingIDs, id)
		}
	}
	res.OutputSHA256 = hex.EncodeToString(h.Sum(nil))
	return res, nil
}

func baselineResponse(id string, fields map[string]json.RawMessage) (*Response, error) {
	resp := &Response{ID: id}
	baselineTrace(resp, fields)
	baselineMessages(resp, fields)
	if raw, ok := fields["token_usage"]; ok {
		var tu TokenUsage
		if json.Unmarshal(raw, &tu) == nil && tu.Input >= 0 && tu.Output >= 0 {
			resp.TokenUsage = &tu
		}
	}
	for name, dst := range map[string]**float64{"cost_usd": &resp.CostUSD, "duration_ms": &resp.DurationMs} {
		var v float64
		if raw, ok := fields[name]; ok && json.Unmarshal(raw, &v) == nil && v >= 0 {
			*dst = &v
		}
	}
	if raw, ok := fields["text"]; ok && string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			resp.Text = s
		} else {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, errors.New("compacting text")
			}
			resp.Text = b.String()
		}
	} else {
		resp.Text, _ = lastAssistantContent(resp.OutputMessages)
	}
	return resp, nil
}

func baselineTrace(resp *Response, fields map[string]json.RawMessage) {
	if raw, ok := fields["trace"]; ok {
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for _, el := range elems {
				var ev struct {
					Type      *string         `json:"type"`
					Timestamp *string         `json:"timestamp"`
					ID        *string         `json:"id"`
					Name      *string         `json:"name"`
					Input     json.RawMessage `json:"input"`
					Output    json.RawMessage `json:"output"`
				}
				if json.Unmarshal(el, &ev) != nil || ev.Type == nil || ev.Timestamp == nil {
					resp.DroppedTraceEvents++
					continue
				}
				if _, ok := traceType([]byte(*ev.Type)); !ok {
					resp.DroppedTraceEvents++
					continue
				}
				te := TraceEvent{Type: *ev.Type, Timestamp: *ev.Timestamp, Input: ev.Input, Output: ev.Output, Raw: el}
				if ev.ID != nil {
					te.ID = *ev.ID
				}
				if ev.Name != nil {
					te.Name = *ev.Name
				}
				resp.Trace = append(resp.Trace, te)
			}
		}
	}
}

func baselineMessages(resp *Response, fields map[string]json.RawMessage) {
	resp.OutputMessages = baselineMessageList(fields["output_messages"])
	resp.Output = baselineMessageList(fields["output"])
}

// baselineMessageList reads output_messages, or AgentV 4.42's output.
func baselineMessageList(raw json.RawMessage) []OutputMessage {
	var out []OutputMessage
	if raw != nil {
		var msgs []struct {
			Role      *string           `json:"role"`
			Name      *string           `json:"name"`
			Content   json.RawMessage   `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
			Timestamp *string           `json:"timestamp"`
			Metadata  json.RawMessage   `json:"metadata"`
		}
		if json.Unmarshal(raw, &msgs) == nil {
			for _, m := range msgs {
				if m.Role == nil {
					continue
				}
				om := OutputMessage{Role: *m.Role, Content: m.Content, Metadata: m.Metadata}
				if m.Name != nil {
					om.Name = *m.Name
				}
				if m.Timestamp != nil {
					om.Timestamp = *m.Timestamp
				}
				for _, rawCall := range m.ToolCalls {
					var tc struct {
						Tool       *string         `json:"tool"`
						Input      json.RawMessage `json:"input"`
						Output     json.RawMessage `json:"output"`
						ID         *string         `json:"id"`
						Timestamp  *string         `json:"timestamp"`
						DurationMs json.RawMessage `json:"duration_ms"`
					}
					if json.Unmarshal(rawCall, &tc) != nil || tc.Tool == nil {
						continue
					}
					call := ToolCall{Tool: *tc.Tool, Input: tc.Input, Output: tc.Output}
					var d float64
					if json.Unmarshal(tc.DurationMs, &d) == nil && len(tc.DurationMs) > 0 && tc.DurationMs[0] != 'n' && d >= 0 {
						call.DurationMs = &d
					}
					if tc.ID != nil {
						call.ID = *tc.ID
					}
					if tc.Timestamp != nil {
						call.Timestamp = *tc.Timestamp
					}
					om.ToolCalls = append(om.ToolCalls, call)
				}
				out = append(out, om)
			}
		}
	}
	return out
}
