package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseReference(t *testing.T) {
	tests := []struct {
		name    string
		want    Reference
		wantErr bool
	}{
		{name: "localhost/evalrun/collector:dev", want: Reference{Repository: "localhost/evalrun/collector", Tag: "dev"}},
		{name: "localhost:5000/a/b:v1.2", want: Reference{Repository: "localhost:5000/a/b", Tag: "v1.2"}},
		{name: "localhost/evalrun/collector", wantErr: true},
		{name: "localhost:5000/a", wantErr: true},
		{name: "Upper/case:dev", wantErr: true},
		{name: "a/b:bad tag", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReference(tt.name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseReference(%q) error = %v, wantErr %v", tt.name, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseReference(%q) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestParseFileFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    FileEntry
		wantErr bool
	}{
		{in: "/collector=bin/collector", want: FileEntry{Dest: "/collector", Src: "bin/collector"}},
		{in: "/app/eval.yaml=examples/x.yaml:0644", want: FileEntry{Dest: "/app/eval.yaml", Src: "examples/x.yaml", Mode: 0o644}},
		{in: "collector=bin/collector", wantErr: true},
		{in: "/a/../b=x", wantErr: true},
		{in: "/a=x:999", wantErr: true},
		{in: "/a=", wantErr: true},
		{in: "/=x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseFileFlag(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFileFlag(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseFileFlag(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// readLayout returns the files of an image layout tarball.
func readLayout(t *testing.T, file string) map[string][]byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = b
		}
	}
}

type layerFile struct {
	Mode     int64
	UID, GID int
	Type     byte
	Linkname string
	Content  string
}

func readLayer(t *testing.T, blob []byte) map[string]layerFile {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	got := map[string]layerFile{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got[hdr.Name] = layerFile{Mode: hdr.Mode, UID: hdr.Uid, GID: hdr.Gid, Type: hdr.Typeflag, Linkname: hdr.Linkname, Content: string(b)}
	}
}

func TestWriteImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{
		Name:       "localhost/evalrun/test:dev",
		Files:      []FileEntry{{Dest: "/app/tool", Src: bin}, {Dest: "/app/data.txt", Src: bin, Mode: 0o644}},
		Dirs:       []DirEntry{{Dest: "/work", Mode: 0o1777}},
		Applets:    []string{"sh", "cat"},
		Entrypoint: []string{"/app/tool"},
		Cmd:        []string{"--healthcheck"},
		Env:        []string{"MODE=test"},
		Labels:     map[string]string{"org.opencontainers.image.title": "test"},
		User:       "65532:65532",
		WorkingDir: "/app",
	}
	spec.BusyboxPath = bin // any regular file stands in for busybox when applets are listed
	out1, out2 := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	d1, err := writeImage(spec, out1)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := writeImage(spec, out2)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("same inputs gave different digests %s and %s", d1, d2)
	}

	files := readLayout(t, out1)
	var idx index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 {
		t.Fatalf("index has %d manifests, want 1", len(idx.Manifests))
	}
	if diff := cmp.Diff(map[string]string{
		"io.containerd.image.name":          "localhost/evalrun/test:dev",
		"org.opencontainers.image.ref.name": "dev",
	}, idx.Manifests[0].Annotations); diff != "" {
		t.Errorf("index annotations mismatch (-want +got):\n%s", diff)
	}
	// Every blob's name is its digest.
	for name, b := range files {
		if len(name) > len("blobs/sha256/") && name[:len("blobs/sha256/")] == "blobs/sha256/" {
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != name[len("blobs/sha256/"):] {
				t.Errorf("blob %s has a different sha256", name)
			}
		}
	}
	var man manifest
	if err := json.Unmarshal(files["blobs/sha256/"+d1[len("sha256:"):]], &man); err != nil {
		t.Fatalf("manifest %s: %v", d1, err)
	}
	var cfg imageConfig
	if err := json.Unmarshal(files["blobs/sha256/"+man.Config.Digest[len("sha256:"):]], &cfg); err != nil {
		t.Fatal(err)
	}
	wantCfg := containerConfig{User: "65532:65532", Env: []string{"PATH=/bin:/usr/bin:/", "MODE=test"}, Entrypoint: []string{"/app/tool"},
		Cmd: []string{"--healthcheck"}, WorkingDir: "/app", Labels: map[string]string{"org.opencontainers.image.title": "test"}}
	if diff := cmp.Diff(wantCfg, cfg.Config); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
	layerBlob := files["blobs/sha256/"+man.Layers[0].Digest[len("sha256:"):]]
	gz, err := gzip.NewReader(bytes.NewReader(layerBlob))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(gz)
	sum := sha256.Sum256(raw)
	if diff := cmp.Diff([]string{"sha256:" + hex.EncodeToString(sum[:])}, cfg.RootFS.DiffIDs); diff != "" {
		t.Errorf("diff ids mismatch (-want +got):\n%s", diff)
	}

	got := readLayer(t, layerBlob)
	want := map[string]layerFile{
		"app/":          {Mode: 0o755, Type: tar.TypeDir},
		"app/data.txt":  {Mode: 0o644, Type: tar.TypeReg, Content: "#!binary"},
		"app/tool":      {Mode: 0o755, Type: tar.TypeReg, Content: "#!binary"},
		"bin/":          {Mode: 0o755, Type: tar.TypeDir},
		"bin/busybox":   {Mode: 0o755, Type: tar.TypeReg, Content: "#!binary"},
		"bin/cat":       {Mode: 0o777, Type: tar.TypeSymlink, Linkname: "busybox"},
		"bin/sh":        {Mode: 0o777, Type: tar.TypeSymlink, Linkname: "busybox"},
		"etc/":          {Mode: 0o755, Type: tar.TypeDir},
		"etc/group":     {Mode: 0o644, Type: tar.TypeReg, Content: "root:x:0:\nnonroot:x:65532:\n"},
		"etc/passwd":    {Mode: 0o644, Type: tar.TypeReg, Content: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"home/":         {Mode: 0o755, Type: tar.TypeDir},
		"home/nonroot/": {Mode: 0o700, UID: 65532, GID: 65532, Type: tar.TypeDir},
		"tmp/":          {Mode: 0o1777, Type: tar.TypeDir},
		"work/":         {Mode: 0o1777, Type: tar.TypeDir},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer mismatch (-want +got):\n%s", diff)
	}
}

func TestLayerEntriesRejectsFileUnderFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := layerEntries(Spec{Files: []FileEntry{{Dest: "/a", Src: f}, {Dest: "/a/b", Src: f}}}, nil)
	if err == nil {
		t.Fatal("layerEntries accepted /a/b below the file /a")
	}
}

func TestLayerEntriesMissingSource(t *testing.T) {
	_, err := layerEntries(Spec{Files: []FileEntry{{Dest: "/a", Src: "/does/not/exist"}}}, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("layerEntries error = %v, want a not-exist error", err)
	}
}

// TestRootFS packs a root file system tree: directories, files (setuid dropped) and symlinks owned by root, with a
// --file and the defaults overriding entries of the same name.
func TestRootFS(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"usr/bin", "etc", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask, setuid included
			t.Fatal(err)
		}
	}
	write("usr/bin/tool", "tool", 0o4755)
	write("usr/bin/replaced", "old", 0o755)
	write("etc/passwd", "attacker:x:0:0::/:/bin/sh\n", 0o644)
	if err := os.Symlink("tool", filepath.Join(root, "usr/bin/alias")); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "new")
	if err := os.WriteFile(newer, []byte("new"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "localhost/evalrun/test:dev", RootFS: root, Files: []FileEntry{{Dest: "/usr/bin/replaced", Src: newer}},
		User: "65532:65532", WorkingDir: "/"}
	out := filepath.Join(dir, "a.tar")
	d, err := writeImage(spec, out)
	if err != nil {
		t.Fatal(err)
	}
	files := readLayout(t, out)
	var man manifest
	if err := json.Unmarshal(files["blobs/sha256/"+d[len("sha256:"):]], &man); err != nil {
		t.Fatal(err)
	}
	got := readLayer(t, files["blobs/sha256/"+man.Layers[0].Digest[len("sha256:"):]])
	want := map[string]layerFile{
		"usr/":             {Mode: 0o755, Type: tar.TypeDir},
		"usr/bin/":         {Mode: 0o755, Type: tar.TypeDir},
		"usr/bin/tool":     {Mode: 0o755, Type: tar.TypeReg, Content: "tool"},
		"usr/bin/alias":    {Mode: 0o777, Type: tar.TypeSymlink, Linkname: "tool"},
		"usr/bin/replaced": {Mode: 0o755, Type: tar.TypeReg, Content: "new"},
		"etc/":             {Mode: 0o755, Type: tar.TypeDir},
		"etc/group":        {Mode: 0o644, Type: tar.TypeReg, Content: "root:x:0:\nnonroot:x:65532:\n"},
		"etc/passwd":       {Mode: 0o644, Type: tar.TypeReg, Content: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"home/":            {Mode: 0o755, Type: tar.TypeDir},
		"home/nonroot/":    {Mode: 0o700, UID: 65532, GID: 65532, Type: tar.TypeDir},
		"tmp/":             {Mode: 0o1777, Type: tar.TypeDir},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer mismatch (-want +got):\n%s", diff)
	}
}

func TestRootFSRejectsSpecialFiles(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := layerEntries(Spec{RootFS: root}, nil)
	if err == nil || !strings.Contains(err.Error(), "fifo is neither") {
		t.Fatalf("layerEntries error = %v, want the FIFO named", err)
	}
}
