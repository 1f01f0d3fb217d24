package collector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
)

// Why a re-judge does not judge a case: each is the missing case's error, after "not judged: ".
const (
	// whyNotKept: the source kept no record of the case (it did not answer it, the record was beyond the storage
	// budget, or the source ran before records were kept).
	whyNotKept = "EvalRun %s kept no record of this case (its runner did not answer it, or the record was beyond the source's storage budget)"
	// whyInputChanged: the case's runner view differs between the source's eval file and this run's.
	whyInputChanged = "the case's input changed since EvalRun %s answered it (runner-view digest %.12s there, %.12s in this run's eval file)"
	// whyUnreadable: the kept record does not read as the record of its case.
	whyUnreadable = "the record EvalRun %s kept does not read as this case's: %s"
	// whyTooLarge: the record would take the re-judge's output past the bound a runner's output has.
	whyTooLarge = "the record EvalRun %s kept would take the output past its bound of %d bytes"
)

// Rejudged is what a re-judge took from its source's kept records for the pod's shard: the snapshot it wrote
// (the source runner's output as the source collector read it), and why each case it could not judge was not.
type Rejudged struct {
	Snapshot *Snapshot
	// MissingReasons are the errors of the cases not judged, by id.
	MissingReasons map[string]string
	// Judged, InputChanged, NotKept and Unreadable count the shard's cases by what became of them.
	Judged, InputChanged, NotKept, Unreadable int
}

// Note says in one line what the re-judge did, for the collection's message.
func (r *Rejudged) Note(from string) string {
	parts := []string{fmt.Sprintf("judged %d records kept by EvalRun %s", r.Judged, from)}
	for _, c := range []struct {
		n    int
		what string
	}{{r.InputChanged, "input changed"}, {r.NotKept, "record not kept"}, {r.Unreadable, "record unreadable"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d not judged (%s)", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}

// apply makes in the collection of the re-judge rj (of rejudge): its snapshot, the errors of the cases it did not
// judge, the source named on every answered case, and its note. A nil rj (not a re-judge, or one that failed)
// changes nothing.
func (r *Rejudged) apply(in *GatherInput, rejudge *podwire.Rejudge) {
	if r == nil {
		return
	}
	in.Snapshot = r.Snapshot
	in.MissingReasons, in.AnsweredBy, in.Note = r.MissingReasons, rejudge.From, r.Note(rejudge.From)
}

// RecordSource yields the kept records of the source's shard, chunk by chunk (records.Each decodes them).
type RecordSource func(ctx context.Context, f func(where string, chunk []byte) error) error

// WriteRejudgeSnapshot writes into dst, as the source's runner wrote its output, the kept records of the cases of
// the pod's shard that this run may judge: a record filed under one of the shard's ids (the first of an id), whose
// runner-view digest equals the one this run's eval file (file) gives the case, and that reads as the record of its
// id (records.Record.Response). Batched: the records' lines make the JSONL file, within cfg.MaxOutputBytes;
// PerCase: each record is its case's file. Every other case of the shard gets its reason. The records are the
// source runner's data, read as hostile as its output: nothing in them is followed as a path or trusted as an id.
func WriteRejudgeSnapshot(ctx context.Context, cfg *podwire.RunConfig, file *evalfile.File, src RecordSource, dst podwire.Output) (*Rejudged, error) {
	from := cfg.Rejudge.From
	digests, err := newViewDigests(cfg, file)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dst.CaseOutputDir(), 0o755); err != nil {
		return nil, fmt.Errorf("prepare the snapshot directory: %w", err)
	}
	index := make(map[string]int, len(cfg.CaseIDs))
	for i, id := range cfg.CaseIDs {
		if _, dup := index[id]; !dup {
			index[id] = i
		}
	}
	perCase := cfg.Batching == string(evalsv1alpha1.BatchingPerCase)
	mode := records.ModeLine
	if perCase {
		mode = records.ModeSingle
	}
	var batch *bufio.Writer
	var batchFile *os.File
	if !perCase {
		if batchFile, err = os.OpenFile(dst.BatchOutput(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			return nil, fmt.Errorf("create the snapshot's output file: %w", err)
		}
		defer func() { _ = batchFile.Close() }()
		batch = bufio.NewWriterSize(batchFile, 1<<20)
	}
	maxBatch := cfg.MaxOutputBytes
	if maxBatch <= 0 {
		maxBatch = defaultMaxOutputBytes
	}
	out := &Rejudged{Snapshot: &Snapshot{CaseErrors: map[string]error{}}, MissingReasons: map[string]string{}}
	seen := make(map[string]bool, len(cfg.CaseIDs))
	var written int64
	notJudged := func(id, why string, count *int) {
		out.MissingReasons[id] = "not judged: " + why
		*count++
	}
	var scratch []byte // the case views' rendering buffer, reused (viewDigests.of)
	err = src(ctx, func(where string, chunk []byte) error {
		return records.Each(chunk, func(r *records.Record) error {
			i, ok := index[r.ID]
			if !ok || seen[r.ID] {
				return nil
			}
			seen[r.ID] = true
			d, grown, err := digests.of(scratch[:0], r.ID, i)
			scratch = grown
			want := d.String()
			if err != nil {
				notJudged(r.ID, fmt.Sprintf(whyUnreadable, from, "this run's eval file gives no digest: "+err.Error()), &out.Unreadable)
				return nil
			}
			if r.ViewSHA256 != want {
				notJudged(r.ID, fmt.Sprintf(whyInputChanged, from, r.ViewSHA256, want), &out.InputChanged)
				return nil
			}
			if r.Mode != mode {
				notJudged(r.ID, fmt.Sprintf(whyUnreadable, from, fmt.Sprintf("it was read in mode %q, the source's runner wrote %q", r.Mode, mode)), &out.Unreadable)
				return nil
			}
			if _, err := r.Response(); err != nil {
				notJudged(r.ID, fmt.Sprintf(whyUnreadable, from, err.Error()), &out.Unreadable)
				return nil
			}
			data := r.Data()
			if perCase {
				if int64(len(data)) > maxCaseOutputBytes {
					notJudged(r.ID, fmt.Sprintf(whyTooLarge, from, int64(maxCaseOutputBytes)), &out.Unreadable)
					return nil
				}
				if err := writeCaseOutput(dst.CaseOutput(r.ID), data); err != nil {
					return err
				}
			} else {
				if written+int64(len(data))+1 > maxBatch {
					notJudged(r.ID, fmt.Sprintf(whyTooLarge, from, maxBatch), &out.Unreadable)
					return nil
				}
				if _, err := batch.Write(data); err != nil {
					return fmt.Errorf("write the snapshot's output file: %w", err)
				}
				if err := batch.WriteByte('\n'); err != nil {
					return fmt.Errorf("write the snapshot's output file: %w", err)
				}
				written += int64(len(data)) + 1
			}
			out.Judged++
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if batch != nil {
		if err := batch.Flush(); err != nil {
			return nil, fmt.Errorf("write the snapshot's output file: %w", err)
		}
		if err := batchFile.Close(); err != nil {
			return nil, fmt.Errorf("write the snapshot's output file: %w", err)
		}
	}
	for _, id := range cfg.CaseIDs {
		if !seen[id] {
			seen[id] = true
			notJudged(id, fmt.Sprintf(whyNotKept, from), &out.NotKept)
		}
	}
	return out, nil
}

// writeCaseOutput writes one PerCase output file of the snapshot.
func writeCaseOutput(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("prepare the snapshot directory: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write the snapshot of a case's output: %w", err)
	}
	return nil
}

// rejudgeRecords is the RecordSource of the pod's shard (with trials, its shard's trial): the source's record
// ConfigMaps named in cfg.Rejudge (read with the collector's token, whose Role may get exactly those), or the source
// pod's records object in the run's bucket. Records that are gone are no records: their cases are reported not kept. API reads are
// retried with o.Backoff.
func rejudgeRecords(o Options, bucket *shardBucket) RecordSource {
	rj := o.Config.Rejudge
	return func(ctx context.Context, f func(string, []byte) error) error {
		if rj.InBucket {
			if bucket == nil {
				return errors.New("the source's records are in the bucket, but the run has none")
			}
			ref := objstore.RunRef{Namespace: o.Namespace, Name: rj.From, UID: rj.FromUID}
			// The source's records objects are per pod: this pod reads its shard's and trial's.
			key, err := ref.ShardRecordsKey(rj.SourceIndex(int(o.Config.ShardIndex), int(o.Config.Trial)))
			if err != nil {
				return err
			}
			data, err := readRecordsObject(ctx, bucket.store, key)
			if errors.Is(err, objstore.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			return f("records object "+bucket.store.URI(key), data)
		}
		if o.Client == nil {
			return errors.New("the source's records are in ConfigMaps, but the collector has no API client")
		}
		return ConfigMapRecords(o.Client, o.Namespace, rj.ConfigMaps, o.Backoff)(ctx, f)
	}
}

// ConfigMapRecords is the RecordSource of the record ConfigMaps names in namespace, read through c (the
// collector's token), each read retried with b. A ConfigMap that is gone holds no records.
func ConfigMapRecords(c client.Client, namespace string, names []string, b Backoff) RecordSource {
	return func(ctx context.Context, f func(string, []byte) error) error {
		for _, name := range names {
			cm := &corev1.ConfigMap{}
			err := retry(ctx, b, func(ctx context.Context) error {
				return c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
			})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("reading record ConfigMap %s: %w", name, err)
			}
			if data := cm.BinaryData[podwire.RecordsKey]; len(data) > 0 {
				if err := f("record ConfigMap "+name, data); err != nil {
					return fmt.Errorf("record ConfigMap %s: %w", name, err)
				}
			}
		}
		return nil
	}
}

// readRecordsObject reads a records object, at most podwire.MaxRecordObjectBytes (what a collector writes).
func readRecordsObject(ctx context.Context, store *objstore.Store, key string) ([]byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	data, err := io.ReadAll(io.LimitReader(rc, podwire.MaxRecordObjectBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading records object %s: %w", store.URI(key), err)
	}
	if len(data) > podwire.MaxRecordObjectBytes {
		return nil, fmt.Errorf("records object %s is over %d bytes", store.URI(key), podwire.MaxRecordObjectBytes)
	}
	return data, nil
}
