package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// maxConfigMapBundleBytes is the most a bundle ConfigMap's keys and files may hold: the API server takes objects of
// at most 1 MiB, metadata included.
const maxConfigMapBundleBytes = 1<<20 - 16<<10

type bundleOptions struct {
	evalFile, name, output string
	apply                  bool
	s3                     evalsv1alpha1.S3Bucket
	s3Region, s3Prefix     string
}

func newBundleCommand(e *env) *cobra.Command {
	o := &bundleOptions{}
	cmd := &cobra.Command{
		Use:   "bundle DIR [--eval-file PATH] [--name NAME] [-o yaml|json] [--apply] [--s3-endpoint URL --s3-bucket B --s3-prefix P --s3-credentials-secret S]",
		Short: "Make an eval bundle from a local directory: a ConfigMap, or objects under a bucket prefix",
		Long: `Make an eval bundle (spec.evalFile.bundle) from a local directory: the eval file and every file it names
(prompt files, input files, reference files, code-judge scripts), at their paths relative to DIR. Hidden files and
directories (.git) are left out; a symbolic link is refused. The input files the eval file's cases name must be in
it (the runner gets them, and only them, next to its eval file).

Without --s3-endpoint it prints the ConfigMap (its keys the escaped paths: prompts/judge.md is prompts_2Fjudge.md),
or applies it with --apply; a bundle over 1 MiB is refused: put it in a bucket. With --s3-endpoint it uploads every
file to <prefix>/<path> of the bucket, with the keys of the Secret --s3-credentials-secret names (read from the
cluster, as the runs read it), and prints the EvalRun's spec.evalFile to use.

Either way it prints the bundle's digest (spec.evalFile.bundle.sha256) on standard error.`,
		Example: `  # Print the ConfigMap of ./suite, whose eval file is evals/math.yaml
  kubectl evalrun bundle ./suite --eval-file evals/math.yaml --name math-bundle

  # Create or update it in the current namespace
  kubectl evalrun bundle ./suite --eval-file evals/math.yaml --name math-bundle --apply

  # A bundle beyond 1 MiB: upload it under a bucket prefix
  kubectl evalrun bundle ./suite --eval-file evals/math.yaml --s3-endpoint http://seaweedfs.storage:8333 \
      --s3-bucket evals --s3-prefix bundles/math --s3-credentials-secret s3-creds`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	f := cmd.Flags()
	f.StringVar(&o.evalFile, "eval-file", "eval.yaml", "The eval file's path inside DIR (slash-separated).")
	f.StringVar(&o.name, "name", "", "The ConfigMap's name (default: DIR's base name).")
	f.StringVarP(&o.output, "output", "o", outputYAML, "Output format: yaml or json.")
	f.BoolVar(&o.apply, "apply", false, "Apply the ConfigMap (server-side apply) instead of printing it.")
	f.StringVar(&o.s3.Endpoint, "s3-endpoint", "", "Upload to this S3-compatible endpoint (http:// or https://) instead of making a ConfigMap.")
	f.StringVar(&o.s3.Bucket, "s3-bucket", "", "The bucket to upload to.")
	f.StringVar(&o.s3Prefix, "s3-prefix", "", "The prefix the bundle goes under: the bundle's root (required with --s3-endpoint).")
	f.StringVar(&o.s3Region, "s3-region", "", "The region requests are signed for (default us-east-1).")
	f.StringVar(&o.s3.CredentialsSecret, "s3-credentials-secret", "",
		"The Secret (keys accessKeyID, secretAccessKey) in the namespace that holds the bucket's credentials.")
	return cmd
}

func (o *bundleOptions) run(cmd *cobra.Command, e *env, dir string) error {
	if o.output != outputYAML && o.output != outputJSON {
		return fmt.Errorf("--output %q is not one of yaml, json", o.output)
	}
	m, err := o.scan(dir)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "eval bundle %s: %d files, %d bytes, sha256 %s\n", dir, len(m.Files), m.Bytes(), m.SHA256); err != nil {
		return err
	}
	if o.s3.Endpoint != "" {
		return o.upload(cmd, e, dir, m)
	}
	if o.apply && o.name == "" {
		return errors.New("--apply needs the ConfigMap's --name")
	}
	cm, err := o.configMap(dir, m)
	if err != nil {
		return err
	}
	if !o.apply {
		return o.print(cmd.OutOrStdout(), cm)
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	ns, err := e.namespace()
	if err != nil {
		return err
	}
	cm.Namespace = ns
	verb, err := createOrReplace(cmd.Context(), c, cm)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(cmd.OutOrStdout(), "configmap/%s %s\n", cm.Name, verb); err != nil {
		return err
	}
	return o.print(cmd.ErrOrStderr(), evalFileOf(&evalsv1alpha1.EvalBundle{EvalFile: m.EvalFile,
		ConfigMap: &evalsv1alpha1.BundleConfigMap{Name: cm.Name}, SHA256: ptr.To(m.SHA256)}))
}

// createOrReplace creates cm, or replaces the data of the ConfigMap of that name (a bundle's files are all of its
// data: a file removed from the directory leaves the ConfigMap too).
func createOrReplace(ctx context.Context, c client.Client, cm *corev1.ConfigMap) (string, error) {
	err := c.Create(ctx, cm)
	if err == nil {
		return "created", nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	cur := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cur); err != nil {
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	cur.Data, cur.BinaryData = cm.Data, cm.BinaryData
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	for k, v := range cm.Annotations {
		cur.Annotations[k] = v
	}
	if err := c.Update(ctx, cur); err != nil {
		return "", fmt.Errorf("updating ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return "configured", nil
}

// scan reads the directory into a manifest and checks that the eval file parses and that every input file of
// its cases is in the bundle.
func (o *bundleOptions) scan(dir string) (*bundle.Manifest, error) {
	files, err := bundle.Scan(dir)
	if err != nil {
		return nil, err
	}
	m, err := bundle.NewManifest(o.evalFile, files)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(o.evalFile)))
	if err != nil {
		return nil, err
	}
	f, err := evalfile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the eval file %s: %w", o.evalFile, err)
	}
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		for _, ref := range c.InputFileRefs() {
			if _, err := m.Resolve(ref); err != nil {
				return nil, fmt.Errorf("case %s: input file: %w", c.ID, err)
			}
		}
	}
	return m, nil
}

// configMap is the bundle's ConfigMap: each file under its escaped path, as text when it is valid UTF-8.
func (o *bundleOptions) configMap(dir string, m *bundle.Manifest) (*corev1.ConfigMap, error) {
	name := o.name
	if name == "" {
		name = dnsName(filepath.Base(filepath.Clean(dir)))
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{"evals.evalrun.io/bundle-eval-file": m.EvalFile, "evals.evalrun.io/bundle-sha256": m.SHA256}}}
	size := 0
	for _, f := range m.Files {
		key, err := bundle.KeyFor(f.Path)
		if err != nil {
			return nil, err
		}
		size += len(key) + int(f.Size)
		if size > maxConfigMapBundleBytes {
			return nil, fmt.Errorf("the bundle holds %d bytes with its keys, more than a ConfigMap takes (1 MiB): upload it to a bucket "+
				"with --s3-endpoint, --s3-bucket, --s3-prefix and --s3-credentials-secret (spec.evalFile.bundle.s3)", m.Bytes())
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, err
		}
		if err := f.Verify(data); err != nil {
			return nil, fmt.Errorf("%w (it changed while the bundle was made)", err)
		}
		if utf8.Valid(data) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[key] = string(data)
			continue
		}
		if cm.BinaryData == nil {
			cm.BinaryData = map[string][]byte{}
		}
		cm.BinaryData[key] = data
	}
	return cm, nil
}

// upload puts every file of the bundle under the bucket prefix and prints the EvalRun's spec.evalFile.
func (o *bundleOptions) upload(cmd *cobra.Command, e *env, dir string, m *bundle.Manifest) error {
	if o.s3.Bucket == "" || o.s3Prefix == "" || o.s3.CredentialsSecret == "" {
		return errors.New("--s3-endpoint needs --s3-bucket, --s3-prefix and --s3-credentials-secret")
	}
	o.s3.Prefix = ptr.To(strings.Trim(o.s3Prefix, "/"))
	if o.s3Region != "" {
		o.s3.Region = ptr.To(o.s3Region)
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	ns, err := e.namespace()
	if err != nil {
		return err
	}
	store, missing, err := stored.OpenBucket(cmd.Context(), c, ns, o.s3)
	if err != nil {
		return err
	}
	if missing != "" {
		return errors.New(missing)
	}
	for _, f := range m.Files {
		if err := putFile(cmd.Context(), store.Put, dir, f); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "uploaded %d files to %s\n", len(m.Files), store.URI("")); err != nil {
		return err
	}
	return o.print(cmd.OutOrStdout(), evalFileOf(&evalsv1alpha1.EvalBundle{EvalFile: m.EvalFile, S3: &o.s3, SHA256: ptr.To(m.SHA256)}))
}

// putFile uploads bundle file f of dir, verifying it is the file scanned.
func putFile(ctx context.Context, put func(context.Context, string, io.Reader, string) error, dir string, f bundle.File) error {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return err
	}
	if err := f.Verify(data); err != nil {
		return fmt.Errorf("%w (it changed while the bundle was made)", err)
	}
	if err := put(ctx, f.Path, bytes.NewReader(data), "application/octet-stream"); err != nil {
		return fmt.Errorf("uploading %s: %w", f.Path, err)
	}
	return nil
}

// evalFileOf is the EvalRun spec fragment that names the bundle.
func evalFileOf(b *evalsv1alpha1.EvalBundle) any {
	return map[string]any{"spec": map[string]any{"evalFile": evalsv1alpha1.EvalFileSource{Bundle: b}}}
}

// print writes v as YAML or JSON.
func (o *bundleOptions) print(w io.Writer, v any) error {
	var out []byte
	var err error
	if o.output == outputJSON {
		out, err = json.MarshalIndent(v, "", "  ")
		out = append(out, '\n')
	} else {
		out, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// dnsName turns a directory's name into a ConfigMap name.
func dnsName(s string) string {
	n := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	if n == "" {
		return "eval-bundle"
	}
	return n
}
