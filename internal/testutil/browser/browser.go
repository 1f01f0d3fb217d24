// Package browser drives Debian's chromium headless from tests (chromedp): it opens loopback and file URLs only,
// records what would tell a person something went wrong (console errors and warnings, uncaught exceptions, the
// browser log's errors such as Content-Security-Policy refusals, JavaScript dialogs, which it dismisses) and
// writes screenshots as test artifacts. `make test-unit` installs chromium (hack/chromium.sh) and names it in
// EVALRUN_CHROMIUM.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// ChromiumVar names the browser binary (make test-unit sets it from hack/chromium.sh); unset, chromium is looked
// up on PATH.
const ChromiumVar = "EVALRUN_CHROMIUM"

// ArtifactsVar names the folder screenshots are written to; unset, a folder under the test's temporary directory.
const ArtifactsVar = "ARTIFACTS"

// Browser is one headless chromium with one page, and what its pages reported.
type Browser struct {
	ctx context.Context

	mu       sync.Mutex
	problems []string
	dialogs  []string
}

// chromium is the browser binary: $EVALRUN_CHROMIUM, else chromium or chromium-browser on PATH.
func chromium() (string, error) {
	if p := os.Getenv(ChromiumVar); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium: set %s or run hack/chromium.sh", ChromiumVar)
}

// Start starts a headless chromium for the test (stopped when it ends), with a viewport of width x height. Without
// a browser the test is skipped, or failed under EVALRUN_REQUIRE_TEST_ASSETS.
func Start(t testing.TB, width, height int) *Browser {
	t.Helper()
	path, err := chromium()
	if err != nil {
		testutil.AssetMissing(t, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		// Tests run as root in CI containers, where chromium's sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.Flag("window-size", fmt.Sprintf("%d,%d", width, height)),
		// Nothing of a report goes to the network; any request but a loopback one fails.
		chromedp.Flag("proxy-server", "127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	b := &Browser{ctx: ctx}
	if err := chromedp.Listen(ctx, b.listen); err != nil {
		t.Fatalf("starting chromium %s: %v", path, err)
	}
	return b
}

// listen records the events that tell of a problem; a dialog is dismissed so the page goes on.
func (b *Browser) listen(ev any) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
			args := make([]string, 0, len(e.Args))
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.add(fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		text := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			text += " " + e.ExceptionDetails.Exception.Description
		}
		b.add("uncaught exception: " + text)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
			b.add(fmt.Sprintf("browser log (%s, %s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *page.EventJavascriptDialogOpening:
		b.mu.Lock()
		b.dialogs = append(b.dialogs, string(e.Type)+": "+e.Message)
		b.mu.Unlock()
		go func() {
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

func (b *Browser) add(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, p)
}

// Problems are the console errors and warnings, uncaught exceptions and browser log errors so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// Dialogs are the JavaScript dialogs (alert, confirm, prompt) pages opened so far.
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// Clean fails the test with every problem and dialog recorded so far.
func (b *Browser) Clean(t testing.TB) {
	t.Helper()
	for _, p := range b.Problems() {
		t.Errorf("the page reported: %s", p)
	}
	for _, d := range b.Dialogs() {
		t.Errorf("the page opened a dialog: %s", d)
	}
}

// Open navigates to a file or loopback URL and waits until the page's load event.
func (b *Browser) Open(t testing.TB, rawURL string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	loopback := u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "::1" || u.Hostname() == "localhost")
	if u.Scheme != "file" && !loopback {
		t.Fatalf("browser: %s is neither a file nor a loopback URL", rawURL)
	}
	if err := b.Do(chromedp.Navigate(rawURL)); err != nil {
		t.Fatalf("opening %s: %v", rawURL, err)
	}
}

// Do runs actions on the page, bounded by two minutes.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Eval evaluates a JavaScript expression on the page and decodes its value into T, failing the test on error.
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Poll waits until a JavaScript expression is true on the page, failing the test after a minute.
func (b *Browser) Poll(t testing.TB, expr string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok := Eval[bool](t, b, "Boolean("+expr+")")
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not true after a minute: %s", expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot writes a PNG of the whole page (FullScreenshot at quality 100 is lossless PNG) to the artifacts folder as name.png, logs its path and returns it.
func (b *Browser) Screenshot(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(ArtifactsDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// ArtifactsDir is the folder test artifacts go to: $ARTIFACTS (created), else a folder of the test's own.
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(ArtifactsVar)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(errors.Join(fmt.Errorf("creating %s=%s", ArtifactsVar, dir), err))
	}
	return dir
}
