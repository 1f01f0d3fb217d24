package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// probeMode makes the test binary the hostile program a confined script runs: it tries what a script must not do
// and prints, for each attempt, "ok" or the error.
const probeMode = "confine-probe"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case ShimMode:
			os.Exit(Shim(os.Args[2:], os.Stderr))
		case probeMode:
			os.Exit(probe(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// probe tries each attempt named by the environment and prints the outcomes as JSON.
func probe([]string) int {
	out := map[string]string{}
	try := func(name string, err error) {
		if err == nil {
			out[name] = "ok"
			return
		}
		var errno unix.Errno
		if errors.As(err, &errno) {
			out[name] = errno.Error()
			return
		}
		out[name] = err.Error()
	}
	_, err := os.ReadFile(os.Getenv("OWN_KEY"))
	try("read own key", err)
	_, err = os.ReadFile(os.Getenv("OTHER_KEY"))
	try("read other case's key", err)
	_, err = os.ReadDir(filepath.Dir(os.Getenv("OTHER_KEY")))
	try("list other case's directory", err)
	_, err = os.ReadFile(os.Getenv("BUNDLE_FILE"))
	try("read a bundle file", err)
	try("write scratch", os.WriteFile(filepath.Join(os.Getenv("SCRATCH"), "x"), []byte("x"), 0o600))
	try("write beside the keys", os.WriteFile(filepath.Join(filepath.Dir(os.Getenv("OWN_KEY")), "forged"), []byte("x"), 0o600))
	f, err := os.OpenFile("/dev/null", os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		_ = f.Close()
	}
	try("write /dev/null", err)
	c, err := net.Dial("tcp", os.Getenv("TCP_ADDR"))
	if err == nil {
		_ = c.Close()
	}
	try("connect TCP", err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		_ = l.Close()
	}
	try("bind TCP", err)
	l, err = net.Listen("tcp", os.Getenv("FREE_ADDR"))
	if err == nil {
		_ = l.Close()
	}
	try("bind a TCP port", err)
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
		_, port, _ := net.SplitHostPort(os.Getenv("FREE_ADDR"))
		p, _ := strconv.Atoi(port)
		try("raw bind", unix.Bind(fd, &unix.SockaddrInet4{Port: p, Addr: [4]byte{127, 0, 0, 1}}))
		_ = unix.Close(fd)
	}
	for name, sock := range map[string][3]int{
		"MPTCP socket":     {unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP},
		"MPTCP socket (6)": {unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP},
		"UDP socket":       {unix.AF_INET, unix.SOCK_DGRAM, 0},
		"raw socket":       {unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP},
		"SCTP socket":      {unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_SCTP},
	} {
		fd, err := unix.Socket(sock[0], sock[1], sock[2])
		if err == nil {
			_ = unix.Close(fd)
		}
		try(name, err)
	}
	pid, _ := strconv.Atoi(os.Getenv("OUTSIDE_PID"))
	try("signal a process outside", unix.Kill(pid, 0))
	try("signal itself", unix.Kill(os.Getpid(), 0))
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		try("connect an abstract unix socket outside", unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + os.Getenv("ABSTRACT")}))
		_ = unix.Close(fd)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

// A script under the ruleset (and the program it runs) reads its own case's key and the bundle's files, writes
// its scratch directory, and is refused everything else a hostile answer would try: another case's key, writing
// beside the keys, TCP connect and bind, signalling a process outside its domain, an abstract unix socket
// outside it.
func TestShimConfinesAHostileProgram(t *testing.T) {
	abi := ABI()
	if abi < 6 {
		t.Skipf("Landlock ABI %d: this test needs 6 (file, network and scope rules)", abi)
	}
	root := t.TempDir()
	mk := func(rel, data string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own, other := mk("keys/c1/expected", "c1's answer"), mk("keys/c2/expected", "c2's answer")
	bundleFile := mk("bundle/judges/check.sh", "exit 0")
	scratch := filepath.Join(root, "scratch")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lis.Close() }()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	_ = free.Close()
	abstract := fmt.Sprintf("evalrun-confine-test-%d", os.Getpid())
	ul, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ul.Close() }()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Build(Policy{
		Image:    []string{"/usr", "/lib", "/lib64", "/bin", "/etc"},
		Files:    []string{own, bundleFile, self},
		ListDirs: []string{filepath.Join(root, "bundle")},
		Scratch:  []string{scratch},
		ReadOnly: []string{"/proc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rs.Close() }()
	cmd := exec.Command(self, ShimMode, "--", self, probeMode)
	cmd.ExtraFiles = []*os.File{rs.File()}
	cmd.Env = append(os.Environ(), "OWN_KEY="+own, "OTHER_KEY="+other, "BUNDLE_FILE="+bundleFile, "SCRATCH="+scratch,
		"TCP_ADDR="+lis.Addr().String(), "FREE_ADDR="+freeAddr, "OUTSIDE_PID="+strconv.Itoa(os.Getpid()), "ABSTRACT="+abstract)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var got map[string]string
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	denied, refused := unix.EACCES.Error(), unix.EPERM.Error()
	want := map[string]string{
		"read own key":                "ok",
		"read a bundle file":          "ok",
		"write scratch":               "ok",
		"write /dev/null":             "ok",
		"signal itself":               "ok",
		"read other case's key":       denied,
		"list other case's directory": denied,
		"write beside the keys":       denied,
		"connect TCP":                 denied,
		"bind TCP":                    denied,
		"bind a TCP port":             denied,
		"raw bind":                    denied,
		"MPTCP socket":                denied,
		"MPTCP socket (6)":            denied,
		"UDP socket":                  denied,
		"raw socket":                  denied,
		"SCTP socket":                 denied,
		"signal a process outside":    refused,
		"connect an abstract unix socket outside": refused,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the confined program could do (-want +got):\n%s", d)
	}
}

// A shell script under the shim: the usual tools work, another case's key stays unreadable.
func TestShimRunsAShellScript(t *testing.T) {
	if ABI() < 1 {
		t.Skip("no Landlock")
	}
	root := t.TempDir()
	other := filepath.Join(root, "other")
	if err := os.WriteFile(other, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs, err := Build(Policy{Image: []string{"/usr", "/lib", "/lib64", "/bin", "/etc"}, ReadOnly: []string{"/proc"}, Scratch: []string{"/dev/shm"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rs.Close() }()
	self, _ := os.Executable()
	cmd := exec.Command(self, ShimMode, "--", "/bin/sh", "-c", `echo '{"x":1}' | tr x y; cat "$1" 2>/dev/null || echo refused; echo stdout > /dev/stdout; echo stderr > /dev/stderr; t=$(mktemp -p /dev/shm 2>/dev/null || echo none); echo "$t" | cut -c1-9; rm -f "$t"`, "sh", other)
	cmd.ExtraFiles = []*os.File{rs.File()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := string(out); got != "{\"y\":1}\nrefused\nstdout\nstderr\n/dev/shm/\n" {
		t.Errorf("output %q, want the tr output, the refusal, /dev/stdout and /dev/stderr written and a temporary file in /dev/shm", got)
	}
}

// The shim never runs its command unrestricted: without a ruleset on its fd it fails.
func TestShimWithoutRulesetRunsNothing(t *testing.T) {
	self, _ := os.Executable()
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command(self, ShimMode, "--", "/bin/sh", "-c", "touch "+marker)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 {
		t.Fatalf("err %v (%s), want exit 126", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran without a ruleset")
	}
}

func TestImageRootsLeavesOutThePodsMounts(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr", "etc", "app", "evalrun", "evalrun-eval", "dev", "proc", "sys", "tmp"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "evalrun-eval"), filepath.Join(root, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ImageRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range []string{"app", "etc", "tmp", "usr"} {
		want = append(want, filepath.Join(root, d))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("image roots (-want +got):\n%s", d)
	}
}

// A rule on a symbolic link allows nothing: a rule is never taken on where a link leads.
func TestBuildIgnoresSymlinks(t *testing.T) {
	if ABI() < 1 {
		t.Skip("no Landlock")
	}
	root := t.TempDir()
	secret := filepath.Join(root, "keys", "secret")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(root, "keys"), link); err != nil {
		t.Fatal(err)
	}
	rs, err := Build(Policy{Image: []string{"/usr", "/lib", "/lib64", "/bin", "/etc", link}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rs.Close() }()
	self, _ := os.Executable()
	cmd := exec.Command(self, ShimMode, "--", "/bin/sh", "-c", `cat "$1/secret" 2>/dev/null || echo refused`, "sh", link)
	cmd.ExtraFiles = []*os.File{rs.File()}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "refused\n" {
		t.Errorf("output %q (%v), want the read through the link refused", out, err)
	}
}

// BenchmarkShim is the cost the shim adds per script: the shim's exec, restrict_self and the script's exec,
// against the bare script.
func BenchmarkShim(b *testing.B) {
	rs, err := Build(Policy{Image: []string{"/usr", "/lib", "/lib64", "/bin", "/etc"}})
	if err != nil {
		b.Skip(err)
	}
	defer func() { _ = rs.Close() }()
	self, _ := os.Executable()
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("shim", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(self, ShimMode, "--", "/bin/true")
			cmd.ExtraFiles = []*os.File{rs.File()}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			r, err := Build(Policy{Image: []string{"/usr", "/lib", "/lib64", "/bin", "/etc"}, ReadOnly: []string{"/proc"}})
			if err != nil {
				b.Fatal(err)
			}
			_ = r.Close()
		}
	})
}
