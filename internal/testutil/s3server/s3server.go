// Package s3server runs a real S3-compatible server for tests: SeaweedFS's weed binary (built by
// hack/seaweedfs.sh, found through EVALRUN_WEED), listening on 127.0.0.1 only, on free ports, with its data in a
// temporary directory and one static identity.
//
// Start is for a test; Launch and Stop are for a TestMain that shares one server among its tests.
package s3server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// EnvWeed is the environment variable that holds the weed binary's path. `make test-unit` sets it.
const EnvWeed = "EVALRUN_WEED"

// ErrNoWeed says how to get the weed binary.
var ErrNoWeed = errors.New(EnvWeed + " is not set: run `make seaweedfs` and set it to the path that prints " +
	"(bin/seaweedfs/<version>/weed), or run the tests with `make test-unit`, which does both")

// Region is the region the server's clients sign for.
const Region = "us-east-1"

// Options configure Launch. Zero values take the defaults.
type Options struct {
	// AccessKeyID and SecretAccessKey are the server's one identity (admin on every bucket).
	// Defaults: "evalrun-test" and a fixed test secret.
	AccessKeyID, SecretAccessKey string
	// Buckets are created before Launch returns.
	Buckets []string
	// StartTimeout bounds the start, readiness included. Default 60 s.
	StartTimeout time.Duration
	// Dir holds the server's data, configuration and log. Default: a new temporary directory, removed by Stop.
	Dir string
}

// Server is a running weed process with the S3 gateway.
type Server struct {
	// Endpoint is the S3 API's URL, http://127.0.0.1:<port>.
	Endpoint string
	// AccessKeyID and SecretAccessKey are the identity the server knows.
	AccessKeyID, SecretAccessKey string
	// Dir holds the data, s3.json (the identities) and weed.log.
	Dir string
	// Started is how long the start took, until the server had stored and deleted a first object.
	Started time.Duration

	ports   ports
	ownDir  bool
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped sync.Once
}

type ports struct{ master, masterGRPC, volume, volumeGRPC, filer, filerGRPC, s3, s3GRPC, admin, adminGRPC int }

// Binary returns the weed binary's path from EVALRUN_WEED, or ErrNoWeed.
func Binary() (string, error) {
	p := os.Getenv(EnvWeed)
	if p == "" {
		return "", ErrNoWeed
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s=%s: %w (run `make seaweedfs`)", EnvWeed, p, err)
	}
	return p, nil
}

// Require ends a test that needs the weed binary when it is not there: skipped under -short, otherwise as
// testutil.AssetMissing decides (skipped with the reason, or failed when test assets are required).
func Require(tb testing.TB) {
	tb.Helper()
	if _, err := Binary(); err != nil {
		if testing.Short() {
			tb.Skipf("skipped under -short: %v", err)
		}
		testutil.AssetMissing(tb, err)
	}
}

// Start launches a server for tb and stops it at tb's cleanup. Without EVALRUN_WEED the test fails (it is skipped
// under -short only).
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	Require(tb)
	if opts.Dir == "" {
		opts.Dir = tb.TempDir()
	}
	s, err := Launch(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Launch starts a server and waits until it has stored a first object. The caller calls Stop.
func Launch(ctx context.Context, opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.AccessKeyID == "" {
		opts.AccessKeyID = "evalrun-test"
	}
	if opts.SecretAccessKey == "" {
		opts.SecretAccessKey = "evalrun-test-secret-0123456789"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	ownDir := opts.Dir == ""
	if ownDir {
		if opts.Dir, err = os.MkdirTemp("", "s3server-"); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	// The ports are found free and then handed to weed, so another process may take one in between: try again.
	var errs []error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := launch(ctx, bin, opts, attempt)
		if err == nil {
			s.ownDir = ownDir
			return s, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			break
		}
	}
	if ownDir {
		_ = os.RemoveAll(opts.Dir)
	}
	return nil, errors.Join(errs...)
}

var errPortTaken = errors.New("a port was taken")

func launch(ctx context.Context, bin string, opts Options, attempt int) (*Server, error) {
	t0 := time.Now()
	dir := filepath.Join(opts.Dir, "weed-"+strconv.Itoa(attempt))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(conf, IdentityConfig(opts.AccessKeyID, opts.SecretAccessKey), 0o600); err != nil {
		return nil, err
	}
	p, err := freePorts()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = logf.Close() }() // the child has its own descriptor
	cmd := exec.Command(bin, args(filepath.Join(dir, "data"), conf, p)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "SENTRY_DSN=")
	// The server dies with the test binary, even when that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &Server{
		Endpoint:    "http://127.0.0.1:" + strconv.Itoa(p.s3),
		AccessKeyID: opts.AccessKeyID, SecretAccessKey: opts.SecretAccessKey,
		Dir: dir, ports: p, cmd: cmd, exited: make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx, opts.Buckets); err != nil {
		s.Stop()
		log := s.LogTail(40)
		if strings.Contains(log, "address already in use") || strings.Contains(log, "Port allocation failed") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, fmt.Errorf("weed mini on 127.0.0.1 did not become ready: %w\n--- last lines of %s:\n%s", err, filepath.Join(dir, "weed.log"), log)
	}
	s.Started = time.Since(t0)
	return s, nil
}

// args are the arguments of `weed mini` (master, volume server, filer, S3 gateway and the admin server in one
// process, the fastest to start) on 127.0.0.1 only: data in dataDir, identities in s3Config, logs on stderr, no
// telemetry, no WebDAV, Iceberg, Lance or admin UI, buckets created explicitly only.
func args(dataDir, s3Config string, p ports) []string {
	itoa := strconv.Itoa
	return []string{
		"-logtostderr", "mini",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-dir=" + dataDir,
		"-master.port=" + itoa(p.master), "-master.port.grpc=" + itoa(p.masterGRPC),
		"-master.volumeSizeLimitMB=64", "-master.telemetry=false",
		"-volume.port=" + itoa(p.volume), "-volume.port.grpc=" + itoa(p.volumeGRPC),
		"-filer.port=" + itoa(p.filer), "-filer.port.grpc=" + itoa(p.filerGRPC),
		"-s3.port=" + itoa(p.s3), "-s3.port.grpc=" + itoa(p.s3GRPC),
		"-s3.config=" + s3Config, "-s3.autoCreateBucket=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-admin.ui=false", "-admin.port=" + itoa(p.admin), "-admin.port.grpc=" + itoa(p.adminGRPC), "-admin.port.legacy=0",
		"-webdav=false",
	}
}

// IdentityConfig is weed's -s3.config document with one identity that may do everything.
func IdentityConfig(accessKeyID, secretAccessKey string) []byte {
	return fmt.Appendf(nil, `{"identities":[{"name":"evalrun","credentials":[{"accessKey":%q,"secretKey":%q}],`+
		`"actions":["Admin","Read","Write","List","Tagging"]}]}`+"\n", accessKeyID, secretAccessKey)
}

// freePorts picks ten free TCP ports on 127.0.0.1 below the kernel's ephemeral range, so that no outgoing
// connection (weed's own among them) takes one before weed listens on it.
func freePorts() (ports, error) {
	hi := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > 12000 {
				hi = lo
			}
		}
	}
	const lo = 10000
	var n []int
	seen := map[int]bool{}
	for tries := 0; len(n) < 10; tries++ {
		if tries > 1000 {
			return ports{}, fmt.Errorf("found only %d free ports in [%d, %d)", len(n), lo, hi)
		}
		p := lo + rand.IntN(hi-lo)
		if seen[p] {
			continue
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		n = append(n, p)
	}
	return ports{n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9]}, nil
}

// waitReady creates the buckets and stores and deletes a first object (the volume server has registered by then).
func (s *Server) waitReady(ctx context.Context, buckets []string) error {
	c := s.Client()
	probe := "evalrun-ready"
	todo := append(append([]string(nil), buckets...), probe)
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("weed exited: %v", s.cmd.ProcessState)
		default:
		}
		last = s.tryReady(ctx, c, &todo, probe)
		if last == nil {
			return nil
		}
		var status interface{ HTTPStatusCode() int }
		if errors.As(last, &status) && status.HTTPStatusCode() == 400 {
			return last // e.g. an invalid bucket name: waiting does not help
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-s.exited:
			return fmt.Errorf("weed exited: %v", s.cmd.ProcessState)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) tryReady(ctx context.Context, c *s3.Client, todo *[]string, probe string) error {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for len(*todo) > 0 {
		if err := createBucket(actx, c, (*todo)[0]); err != nil {
			return err
		}
		*todo = (*todo)[1:]
	}
	if _, err := c.PutObject(actx, &s3.PutObjectInput{Bucket: aws.String(probe), Key: aws.String("probe"), Body: bytes.NewReader([]byte("ok"))}); err != nil {
		return err
	}
	if _, err := c.DeleteObject(actx, &s3.DeleteObjectInput{Bucket: aws.String(probe), Key: aws.String("probe")}); err != nil {
		return err
	}
	_, err := c.DeleteBucket(actx, &s3.DeleteBucketInput{Bucket: aws.String(probe)})
	return err
}

// Client is an S3 client for the server with its identity, without retries.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region: Region, BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials:                credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, ""),
		RetryMaxAttempts:           1,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// CreateBucket creates a bucket (an existing one of the server's identity is fine).
func (s *Server) CreateBucket(ctx context.Context, name string) error {
	return createBucket(ctx, s.Client(), name)
}

func createBucket(ctx context.Context, c *s3.Client, name string) error {
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var owned *types.BucketAlreadyOwnedByYou
	if errors.As(err, &owned) {
		return nil
	}
	return err
}

// Pause stops the server's process (SIGSTOP) without closing its sockets: requests hang. Resume undoes it. It
// returns once every thread of the process is stopped: the signal only asks for that, and on a busy machine a
// thread still running could answer a request sent right after it.
func (s *Server) Pause() error {
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for !allThreadsStopped(s.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("weed (pid %d) is not stopped 10s after SIGSTOP", s.cmd.Process.Pid)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// allThreadsStopped reports whether every thread of pid is in the stopped state (T in /proc/<pid>/task/*/stat).
func allThreadsStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, name := range tasks {
		data, err := os.ReadFile(name)
		if err != nil {
			return false
		}
		// The state follows the command name, which is in parentheses and may itself hold ") ".
		i := bytes.LastIndexByte(data, ')')
		if i < 0 || i+2 >= len(data) || data[i+2] != 'T' {
			return false
		}
	}
	return true
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Kill ends the server at once (SIGKILL) and waits for it; its data directory stays until Stop.
func (s *Server) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// Stop kills the server, removes the Unix sockets weed leaves in /tmp for its ports, and removes its directory
// if Launch made it. It may be called more than once.
func (s *Server) Stop() {
	s.stopped.Do(func() {
		s.Kill()
		p := s.ports
		for _, name := range []string{
			fmt.Sprintf("seaweedfs-master-grpc-%d.sock", p.masterGRPC), fmt.Sprintf("seaweedfs-volume-grpc-%d.sock", p.volumeGRPC),
			fmt.Sprintf("seaweedfs-filer-grpc-%d.sock", p.filerGRPC), fmt.Sprintf("seaweedfs-s3-grpc-%d.sock", p.s3GRPC),
			fmt.Sprintf("seaweedfs-admin-grpc-%d.sock", p.adminGRPC),
			fmt.Sprintf("seaweedfs-filer-%d.sock", p.filer), fmt.Sprintf("seaweedfs-s3-%d.sock", p.s3),
		} {
			_ = os.Remove(filepath.Join("/tmp", name))
		}
		if s.ownDir {
			_ = os.RemoveAll(filepath.Dir(s.Dir))
		}
	})
}

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(filepath.Join(s.Dir, "weed.log"))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// CredentialsSecret is a Secret holding the server's keys under the key names a bucket's credentials Secret has
// (objstore.AccessKeyIDFile, objstore.SecretAccessKeyFile), for spec.storage.s3 and spec.evalFile.s3.
func (s *Server) CredentialsSecret(namespace, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{
		objstore.AccessKeyIDFile: []byte(s.AccessKeyID), objstore.SecretAccessKeyFile: []byte(s.SecretAccessKey)}}
}

// Bucket is the API's description of bucket (with prefix) on this server, its credentials in the Secret named
// secret, and Store opens it as the operator does, with the server's keys.
func (s *Server) Bucket(bucket, prefix, secret string) evalsv1alpha1.S3Bucket {
	b := evalsv1alpha1.S3Bucket{Endpoint: s.Endpoint, Bucket: bucket, CredentialsSecret: secret}
	if prefix != "" {
		b.Prefix = &prefix
	}
	return b
}

// Store opens bucket (with prefix) as the operator does, with the server's keys.
func (s *Server) Store(tb testing.TB, bucket, prefix string) *objstore.Store {
	tb.Helper()
	store, err := objstore.Open(objstore.Config{Endpoint: s.Endpoint, Bucket: bucket, Prefix: prefix, PathStyle: true,
		AccessKeyID: s.AccessKeyID, SecretAccessKey: objstore.Secret(s.SecretAccessKey)})
	if err != nil {
		tb.Fatal(err)
	}
	return store
}
