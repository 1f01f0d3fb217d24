package evalsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// errInvalidBundle marks an eval bundle that can never be used as it is: a key or object that is not a bundle
// path, too many files or bytes, a digest other than spec.evalFile.bundle.sha256, an input file it lacks.
var errInvalidBundle = errors.New("invalid eval bundle")

// Bundle is an eval bundle as read when the run is pinned: its manifest, the eval file's bytes and, for a
// bundle from a ConfigMap, the copy the manager pins (the pods read that copy, never the user's ConfigMap).
type Bundle struct {
	manifest *bundle.Manifest
	evalData []byte
	copy     *corev1.ConfigMap
}

// readBundle reads the run's eval bundle (spec.evalFile.bundle) and makes its manifest. It returns a message
// instead while its ConfigMap, Secret or eval file is missing, an error wrapping errInvalidBundle when the bundle
// can never be used, and a bucketpool.CallError when the bucket fails or does not answer in time (bucketpool.Bounds).
func (r *Reader) readBundle(ctx context.Context, run *evalsv1alpha1.EvalRun) (*Bundle, string, error) {
	b := run.Spec.EvalFile.Bundle
	var (
		pb      *Bundle
		missing string
		err     error
	)
	if b.S3 != nil {
		pb, missing, err = r.readBundleObjects(ctx, run, *b.S3)
	} else {
		pb, missing, err = r.readBundleConfigMap(ctx, run, b.ConfigMap.Name)
	}
	if missing != "" || err != nil {
		return nil, missing, err
	}
	if want := ptr.Deref(b.SHA256, ""); want != "" && want != pb.manifest.SHA256 {
		return nil, "", fmt.Errorf("%w: its digest is %s, not spec.evalFile.bundle.sha256 %s", errInvalidBundle, pb.manifest.SHA256, want)
	}
	return pb, "", nil
}

// readBundleConfigMap reads a bundle from ConfigMap name: every key a file (bundle.PathOf). The manager's pinned
// copy, once it exists, is read instead of the user's ConfigMap, so that a change of the source between the copy
// and the rest of the pinning never reaches the run.
func (r *Reader) readBundleConfigMap(ctx context.Context, run *evalsv1alpha1.EvalRun, name string) (*Bundle, string, error) {
	evalPath := run.Spec.EvalFile.Bundle.EvalFile
	pinnedName := children.NamesFor(run.Name).BundleConfigMap()
	src := &corev1.ConfigMap{}
	err := r.api.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: pinnedName}, src)
	switch {
	case err == nil && !metav1.IsControlledBy(src, run):
		return nil, "", children.NotControlled("ConfigMap", pinnedName, run)
	case apierrors.IsNotFound(err):
		err = r.api.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, src)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("waiting for ConfigMap %s holding the eval bundle", name), nil
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the eval bundle's ConfigMap %s: %w", name, err)
	}
	n := len(src.Data) + len(src.BinaryData)
	if n > bundle.MaxFiles {
		return nil, "", fmt.Errorf("%w: ConfigMap %s has %d keys, more than %d files", errInvalidBundle, name, n, bundle.MaxFiles)
	}
	files := make([]bundle.File, 0, n)
	var evalData []byte
	add := func(key string, data []byte) error {
		p, err := bundle.PathOf(key)
		if err != nil {
			return fmt.Errorf("%w: %w", errInvalidBundle, err)
		}
		f, err := bundle.Hash(p, bytes.NewReader(data), bundle.MaxBytes)
		if err != nil {
			return err
		}
		if p == evalPath {
			evalData = data
		}
		files = append(files, f)
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(src.Data)) {
		if err := add(key, []byte(src.Data[key])); err != nil {
			return nil, "", err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(src.BinaryData)) {
		if err := add(key, src.BinaryData[key]); err != nil {
			return nil, "", err
		}
	}
	if evalData == nil {
		key, _ := bundle.KeyFor(evalPath)
		return nil, fmt.Sprintf("waiting for the eval file %s (key %s) in ConfigMap %s holding the eval bundle", evalPath, key, name), nil
	}
	m, err := bundle.NewManifest(evalPath, files)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errInvalidBundle, err)
	}
	cp := &corev1.ConfigMap{
		ObjectMeta: children.Meta(run, pinnedName, children.ComponentEval),
		Immutable:  ptr.To(true),
		Data:       maps.Clone(src.Data),
		BinaryData: maps.Clone(src.BinaryData),
	}
	return &Bundle{manifest: m, evalData: evalData, copy: cp}, "", nil
}

// readBundleObjects reads a bundle from a bucket prefix: every object under it a file (its key after the prefix
// its bundle path), each read once to hash it, within the run's bucket call bounds. Objects whose key ends in "/"
// (folder markers some tools write) are left out.
func (r *Reader) readBundleObjects(ctx context.Context, run *evalsv1alpha1.EvalRun, b evalsv1alpha1.S3Bucket) (*Bundle, string, error) {
	evalPath := run.Spec.EvalFile.Bundle.EvalFile
	store, missing, err := stored.OpenBucket(ctx, r.api, run.Namespace, b)
	if missing != "" || err != nil {
		return nil, missing, err
	}
	where := store.URI("")
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	objs, err := store.List(bctx, "")
	if err != nil {
		return nil, "", bucketpool.OnBucket(b.Endpoint, "listing the eval bundle "+where, err)
	}
	objs = slices.DeleteFunc(objs, func(o objstore.ObjectInfo) bool { return strings.HasSuffix(o.Key, "/") })
	if len(objs) > bundle.MaxFiles {
		return nil, "", fmt.Errorf("%w: %s holds %d objects, more than %d files", errInvalidBundle, where, len(objs), bundle.MaxFiles)
	}
	var total int64
	for _, o := range objs {
		if err := bundle.CheckPath(o.Key); err != nil {
			return nil, "", fmt.Errorf("%w: object %s: %w", errInvalidBundle, store.URI(o.Key), err)
		}
		total += o.Size
	}
	if total > bundle.MaxBytes {
		return nil, "", fmt.Errorf("%w: %s holds %d bytes, more than %d", errInvalidBundle, where, total, bundle.MaxBytes)
	}
	if !slices.ContainsFunc(objs, func(o objstore.ObjectInfo) bool { return o.Key == evalPath }) {
		return nil, fmt.Sprintf("waiting for the eval file %s", store.URI(evalPath)), nil
	}
	files := make([]bundle.File, 0, len(objs))
	var evalData []byte
	for _, o := range objs {
		f, data, err := hashObject(bctx, store, o.Key, o.Key == evalPath)
		if errors.Is(err, objstore.ErrNotFound) {
			return nil, fmt.Sprintf("waiting for %s of the eval bundle (it went while the bundle was read)", store.URI(o.Key)), nil
		}
		if errors.Is(err, bundle.ErrTooLarge) {
			return nil, "", fmt.Errorf("%w: %w", errInvalidBundle, err)
		}
		if err != nil {
			return nil, "", bucketpool.OnBucket(b.Endpoint, "reading "+store.URI(o.Key)+" of the eval bundle", err)
		}
		if data != nil {
			evalData = data
		}
		files = append(files, f)
	}
	m, err := bundle.NewManifest(evalPath, files)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errInvalidBundle, err)
	}
	return &Bundle{manifest: m, evalData: evalData}, "", nil
}

// hashObject reads the object at key once, hashing it; keep also returns its bytes (the eval file).
func hashObject(ctx context.Context, store *objstore.Store, key string, keep bool) (bundle.File, []byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return bundle.File{}, nil, err
	}
	defer func() { _ = rc.Close() }()
	buf := &cappedBuffer{limit: evalfile.MaxWholeBytes}
	var src io.Reader = rc
	if keep {
		src = io.TeeReader(rc, buf)
	}
	f, err := bundle.Hash(key, src, min(bundle.MaxBytes, children.MaxEvalObjectBytes))
	if errors.Is(err, errBundleEvalFileTooLarge) {
		return f, nil, fmt.Errorf("%w: %s: %w", errInvalidBundle, key, err)
	}
	if err != nil || !keep {
		return f, nil, err
	}
	return f, buf.Bytes(), nil
}

// errBundleEvalFileTooLarge marks a bundle's eval file beyond what the manager reads whole.
var errBundleEvalFileTooLarge = fmt.Errorf("a bundle's eval file is read whole and may hold at most %d bytes "+
	"(a larger eval file goes in spec.evalFile.s3, which the manager streams)", evalfile.MaxWholeBytes)

// cappedBuffer is a bytes.Buffer that refuses to grow past limit, so the manager never holds more of a bundle's
// eval file than it may parse whole.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.limit {
		return 0, errBundleEvalFileTooLarge
	}
	return c.Buffer.Write(p)
}

// bundleInputs checks that every input file of the eval file's cases (the `type: file` segments of their input
// messages, bundle.IsFileRef or not: a segment of type file always names a file) is a file of the bundle other
// than the eval file itself, and returns a message naming the first problems otherwise.
func bundleInputs(m *bundle.Manifest, f *evalfile.File) string {
	var problems []string
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		for _, ref := range c.InputFileRefs() {
			file, err := m.Resolve(ref)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("case %s: input file %s", c.ID, err))
			case file.Path == m.EvalFile:
				problems = append(problems, fmt.Sprintf("case %s: input file %q is the eval file itself", c.ID, ref))
			}
			if len(problems) == 3 {
				return "invalid eval bundle: " + strings.Join(problems, "; ") + "; ..."
			}
		}
	}
	if len(problems) > 0 {
		return "invalid eval bundle: " + strings.Join(problems, "; ")
	}
	return ""
}

// Copy is the bundle's copy the manager pins, for a bundle from a ConfigMap (nil otherwise, and for a nil Bundle):
// the pods read that immutable copy, never the user's ConfigMap, so it is created before the eval ConfigMap.
func (b *Bundle) Copy() *corev1.ConfigMap {
	if b == nil {
		return nil
	}
	return b.copy
}

// Pin records the bundle (nil: no bundle) in cfg and returns its manifest for the eval ConfigMap (nil without a
// bundle).
func (b *Bundle) Pin(cfg *podwire.RunConfig) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	m := b.manifest
	cfg.Bundle.SHA256, cfg.Bundle.Files, cfg.Bundle.Bytes = m.SHA256, int32(len(m.Files)), m.Bytes()
	return m.Encode()
}
