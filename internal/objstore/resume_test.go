package objstore_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
)

// cutProxy forwards TCP connections on 127.0.0.1 to the server. Once armed, it cuts the connection that carries the
// next `after` bytes of answers (headers included), calling onCut first; or it flips a bit of a request. It knows
// nothing of S3 or HTTP: it only breaks a connection or a byte, as a network failure would.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	armed  bool
	left   int64
	onCut  func()
	cuts   atomic.Int32
	// corruptLeft counts down the request bytes to the one to flip; -1: none.
	corruptLeft int64
	corrupted   atomic.Int32
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: strings.TrimPrefix(target, "http://"), corruptLeft: -1}
	t.Cleanup(func() { _ = ln.Close() })
	go p.serve()
	return p
}

func (p *cutProxy) endpoint() string { return "http://" + p.ln.Addr().String() }

func (p *cutProxy) arm(after int64, onCut func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.left, p.onCut = true, after, onCut
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(client net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				p.corrupt(buf[:n])
				if _, werr := up.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		_ = up.Close()
	}()
	defer func() { _ = client.Close(); _ = up.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			if cut, keep := p.take(int64(n)); cut {
				_, _ = client.Write(buf[:keep])
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// armCorrupt makes the proxy flip one bit of the byte that comes offset bytes later from a client.
func (p *cutProxy) armCorrupt(offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.corruptLeft = offset
}

// corrupt flips the armed byte if it is in b.
func (p *cutProxy) corrupt(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.corruptLeft < 0 {
		return
	}
	if p.corruptLeft < int64(len(b)) {
		b[p.corruptLeft] ^= 0x01
		p.corruptLeft = -1
		p.corrupted.Add(1)
		return
	}
	p.corruptLeft -= int64(len(b))
}

// take accounts n bytes of answer: cut says to break the connection after its first keep bytes.
func (p *cutProxy) take(n int64) (cut bool, keep int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed {
		return false, n
	}
	if n <= p.left {
		p.left -= n
		return false, n
	}
	keep = p.left
	p.armed = false
	if p.onCut != nil {
		p.onCut()
	}
	p.cuts.Add(1)
	return true, keep
}

// TestGetResumes cuts a download's connection half-way: Get and GetVerified carry on from where it broke, and
// refuse to when the object was replaced meanwhile.
func TestGetResumes(t *testing.T) {
	srv := sharedServer(t)
	direct := openStore(t, srv)
	proxy := startCutProxy(t, srv.Endpoint)
	cfg := config(srv, t)
	cfg.Endpoint = proxy.endpoint()
	cfg.Prefix = strings.TrimSuffix(strings.TrimPrefix(direct.URI(""), "s3://"+testBucket+"/"), "/")
	st, err := objstore.Open(cfg, fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, time.Minute)
	data := randomBytes(9 << 20)
	if err := direct.Put(ctx, "big", bytes.NewReader(data), ""); err != nil {
		t.Fatal(err)
	}

	t.Run("Get", func(t *testing.T) {
		before := proxy.cuts.Load()
		proxy.arm(3<<20, nil)
		rc, err := st.Get(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if proxy.cuts.Load() != before+1 {
			t.Fatal("the proxy did not cut the connection")
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("after a resumed read: %d bytes (sha256 %s), want %d (%s)", len(got), sha(got), len(data), sha(data))
		}
	})
	t.Run("GetVerified", func(t *testing.T) {
		proxy.arm(5<<20, nil)
		var buf bytes.Buffer
		if err := st.GetVerified(ctx, "big", sha(data), int64(len(data)), &buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatal("content differs")
		}
	})
	t.Run("object replaced", func(t *testing.T) {
		other := randomBytes(9<<20 + 1)
		proxy.arm(2<<20, func() {
			if err := direct.Put(ctx, "big", bytes.NewReader(other), ""); err != nil {
				t.Error(err)
			}
		})
		err := st.GetVerified(ctx, "big", sha(data), 1<<30, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "changed while it was read") {
			t.Fatalf("err = %v, want the object's change to be detected", err)
		}
		var se *objstore.Error
		if !errors.As(err, &se) || se.StatusCode != 412 {
			t.Errorf("err = %#v, want HTTP 412", err)
		}
	})
}

// TestCorruptUploadRefused flips one bit of an upload's body on its way: the server refuses it (the body's digest
// does not match), and nothing is stored.
func TestCorruptUploadRefused(t *testing.T) {
	srv := sharedServer(t)
	direct := openStore(t, srv)
	proxy := startCutProxy(t, srv.Endpoint)
	cfg := config(srv, t)
	cfg.Endpoint = proxy.endpoint()
	cfg.Prefix = strings.TrimSuffix(strings.TrimPrefix(direct.URI(""), "s3://"+testBucket+"/"), "/")
	st, err := objstore.Open(cfg, fastRetry, objstore.WithPartSize(objstore.MinPartSize))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, time.Minute)
	for _, size := range []int{1 << 20, objstore.MinPartSize + 1<<20} { // one request; a multipart upload
		proxy.armCorrupt(int64(size) / 2)
		err := st.Put(ctx, "corrupt", bytes.NewReader(randomBytes(size)), "")
		if proxy.corrupted.Load() == 0 {
			t.Fatal("the proxy corrupted nothing")
		}
		proxy.corrupted.Store(0)
		var se *objstore.Error
		if !errors.As(err, &se) || se.StatusCode != 400 {
			t.Fatalf("Put of %d bytes with a flipped bit: err = %v, want the server's refusal (HTTP 400)", size, err)
		}
		t.Logf("%d bytes: %v", size, err)
		if ok, err := direct.Exists(ctx, "corrupt"); ok || err != nil {
			t.Fatalf("Exists after the refused Put = %v, %v", ok, err)
		}
	}
}
