package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// OCI media types used in the layout.
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	nonrootUID = 65532
)

// epoch is the timestamp of every file and of the image, so equal inputs give equal digests.
var epoch = time.Unix(0, 0).UTC()

// entry is one tar entry of the layer.
type entry struct {
	name     string // without leading slash
	typeflag byte
	mode     int64
	uid, gid int
	src      string // host file for regular files, "" when data is set
	data     []byte
	linkname string
}

// layerEntries lists the layer's entries, parents before children, user files overriding the defaults.
func layerEntries(spec Spec, applets []string) ([]entry, error) {
	byName := map[string]entry{}
	add := func(e entry) { byName[e.name] = e }
	if spec.RootFS != "" {
		tree, err := rootFSEntries(spec.RootFS)
		if err != nil {
			return nil, err
		}
		for _, e := range tree {
			add(e)
		}
	}

	add(entry{name: "etc", typeflag: tar.TypeDir, mode: 0o755})
	add(entry{name: "etc/passwd", typeflag: tar.TypeReg, mode: 0o644, data: []byte(
		"root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")})
	add(entry{name: "etc/group", typeflag: tar.TypeReg, mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")})
	add(entry{name: "tmp", typeflag: tar.TypeDir, mode: 0o1777})
	add(entry{name: "home", typeflag: tar.TypeDir, mode: 0o755})
	add(entry{name: "home/nonroot", typeflag: tar.TypeDir, mode: 0o700, uid: nonrootUID, gid: nonrootUID})

	if spec.BusyboxPath != "" {
		add(entry{name: "bin/busybox", typeflag: tar.TypeReg, mode: 0o755, src: spec.BusyboxPath})
		for _, a := range applets {
			if a == "busybox" || strings.ContainsAny(a, "/ ") {
				continue
			}
			add(entry{name: "bin/" + a, typeflag: tar.TypeSymlink, mode: 0o777, linkname: "busybox"})
		}
	}
	for _, d := range spec.Dirs {
		add(entry{name: strings.TrimPrefix(d.Dest, "/"), typeflag: tar.TypeDir, mode: int64(d.Mode)})
	}
	for _, f := range spec.Files {
		st, err := os.Stat(f.Src)
		if err != nil {
			return nil, fmt.Errorf("file for %s: %w", f.Dest, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("file for %s: %s is not a regular file", f.Dest, f.Src)
		}
		mode := f.Mode
		if mode == 0 {
			mode = st.Mode().Perm()
		}
		add(entry{name: strings.TrimPrefix(f.Dest, "/"), typeflag: tar.TypeReg, mode: int64(mode), src: f.Src})
	}
	// Parent directories that were not listed explicitly.
	for name := range byName {
		for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if _, ok := byName[dir]; !ok {
				byName[dir] = entry{name: dir, typeflag: tar.TypeDir, mode: 0o755}
			}
		}
	}
	for name, e := range byName {
		if e.typeflag == tar.TypeDir {
			continue
		}
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if p := byName[dir]; p.typeflag != tar.TypeDir {
				return nil, fmt.Errorf("path /%s needs /%s to be a directory", name, dir)
			}
		}
	}
	entries := make([]entry, 0, len(byName))
	for _, e := range byName {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	return entries, nil
}

// rootFSEntries lists the tree under dir as layer entries: directories, regular files and symlinks (their targets
// as they are), owned by root, with permission and sticky bits only (a setuid or setgid bit buys nothing under
// Pod Security restricted and is dropped). Any other kind of file (device, FIFO, socket) is an error.
func rootFSEntries(dir string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := int64(info.Mode().Perm())
		if info.Mode()&os.ModeSticky != 0 {
			mode |= 0o1000
		}
		switch t := info.Mode().Type(); {
		case t == os.ModeDir:
			out = append(out, entry{name: name, typeflag: tar.TypeDir, mode: mode})
		case t == os.ModeSymlink:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, entry{name: name, typeflag: tar.TypeSymlink, mode: 0o777, linkname: target})
		case t.IsRegular():
			out = append(out, entry{name: name, typeflag: tar.TypeReg, mode: mode, src: p})
		default:
			return fmt.Errorf("root file system %s: %s is neither a directory, a regular file nor a symlink", dir, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading root file system: %w", err)
	}
	return out, nil
}

// busyboxApplets asks the busybox binary for its applets.
func busyboxApplets(busybox string) ([]string, error) {
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("listing applets of %s: %w", busybox, err)
	}
	return strings.Fields(string(out)), nil
}

// countingHash counts and hashes what is written through it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

func (c *countingHash) digest() string { return "sha256:" + hex.EncodeToString(c.h.Sum(nil)) }

// writeLayer writes the gzip'd layer tar to w and returns the diff id (digest of the uncompressed tar), the
// blob digest and the blob size.
func writeLayer(w io.Writer, entries []entry) (diffID, digest string, size int64, err error) {
	blob := &countingHash{h: sha256.New()}
	gz, err := gzip.NewWriterLevel(io.MultiWriter(w, blob), gzip.BestSpeed)
	if err != nil {
		return "", "", 0, err
	}
	raw := &countingHash{h: sha256.New()}
	tw := tar.NewWriter(io.MultiWriter(gz, raw))
	for _, e := range entries {
		if err := writeEntry(tw, e); err != nil {
			return "", "", 0, err
		}
	}
	if err := tw.Close(); err != nil {
		return "", "", 0, err
	}
	if err := gz.Close(); err != nil {
		return "", "", 0, err
	}
	return raw.digest(), blob.digest(), blob.n, nil
}

func writeEntry(tw *tar.Writer, e entry) error {
	hdr := &tar.Header{
		Typeflag: e.typeflag, Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid,
		ModTime: epoch, Linkname: e.linkname, Format: tar.FormatPAX,
	}
	if e.typeflag == tar.TypeDir {
		hdr.Name += "/"
	}
	if e.typeflag != tar.TypeReg {
		return tw.WriteHeader(hdr)
	}
	if e.src == "" {
		hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(e.data)
		return err
	}
	f, err := os.Open(e.src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Size = st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("copying %s: %w", e.src, err)
	}
	return nil
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type imageConfig struct {
	Created      string          `json:"created"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       rootFS          `json:"rootfs"`
	History      []history       `json:"history"`
}

type containerConfig struct {
	User       string            `json:"User,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Cmd        []string          `json:"Cmd,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type history struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

func jsonBlob(v any) ([]byte, string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	return b, "sha256:" + hex.EncodeToString(sum[:]), nil
}

// imageEnv puts a default PATH first unless the spec sets one.
func imageEnv(env []string) []string {
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return env
		}
	}
	return append([]string{"PATH=/bin:/usr/bin:/"}, env...)
}

// writeImage writes the OCI image layout tarball to out and returns the manifest digest.
func writeImage(spec Spec, out string) (string, error) {
	ref, err := parseReference(spec.Name)
	if err != nil {
		return "", err
	}
	applets := spec.Applets
	if spec.BusyboxPath != "" && len(applets) == 0 {
		if applets, err = busyboxApplets(spec.BusyboxPath); err != nil {
			return "", err
		}
	}
	entries, err := layerEntries(spec, applets)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	layerFile, err := os.CreateTemp(filepath.Dir(out), ".layer-*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(layerFile.Name()) }()
	defer func() { _ = layerFile.Close() }()
	diffID, layerDigest, layerSize, err := writeLayer(layerFile, entries)
	if err != nil {
		return "", fmt.Errorf("writing layer: %w", err)
	}

	created := epoch.Format(time.RFC3339)
	cfg := imageConfig{
		Created: created, Architecture: runtime.GOARCH, OS: "linux",
		Config: containerConfig{
			User: spec.User, Env: imageEnv(spec.Env), Entrypoint: spec.Entrypoint, Cmd: spec.Cmd,
			WorkingDir: spec.WorkingDir, Labels: spec.Labels,
		},
		RootFS:  rootFS{Type: "layers", DiffIDs: []string{diffID}},
		History: []history{{Created: created, CreatedBy: "imagepack " + strconv.Itoa(len(entries)) + " entries"}},
	}
	cfgBytes, cfgDigest, err := jsonBlob(cfg)
	if err != nil {
		return "", err
	}
	man := manifest{
		SchemaVersion: 2, MediaType: mediaTypeManifest,
		Config: descriptor{MediaType: mediaTypeConfig, Digest: cfgDigest, Size: int64(len(cfgBytes))},
		Layers: []descriptor{{MediaType: mediaTypeLayer, Digest: layerDigest, Size: layerSize}},
	}
	manBytes, manDigest, err := jsonBlob(man)
	if err != nil {
		return "", err
	}
	idx := index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{{
		MediaType: mediaTypeManifest, Digest: manDigest, Size: int64(len(manBytes)),
		Platform: &platform{Architecture: runtime.GOARCH, OS: "linux"},
		Annotations: map[string]string{
			// containerd's import names the image from this annotation.
			"io.containerd.image.name":          ref.Repository + ":" + ref.Tag,
			"org.opencontainers.image.ref.name": ref.Tag,
		},
	}}}
	idxBytes, err := json.Marshal(idx)
	if err != nil {
		return "", err
	}
	if _, err := layerFile.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if err := writeLayout(out, idxBytes, []blob{
		{digest: cfgDigest, data: cfgBytes},
		{digest: manDigest, data: manBytes},
		{digest: layerDigest, size: layerSize, r: layerFile},
	}); err != nil {
		return "", err
	}
	return manDigest, nil
}

// blob is one file under blobs/sha256/.
type blob struct {
	digest string
	data   []byte
	size   int64
	r      io.Reader
}

// writeLayout writes the image layout tarball atomically (temp file, then rename).
func writeLayout(out string, indexJSON []byte, blobs []blob) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".image-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	tw := tar.NewWriter(tmp)
	add := func(name string, size int64, r io.Reader) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		n, err := io.Copy(tw, r)
		if err == nil && n != size {
			err = fmt.Errorf("%s: wrote %d bytes, want %d", name, n, size)
		}
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	layout := []byte(`{"imageLayoutVersion":"1.0.0"}`)
	if err := add("oci-layout", int64(len(layout)), bytes.NewReader(layout)); err != nil {
		return err
	}
	if err := add("index.json", int64(len(indexJSON)), bytes.NewReader(indexJSON)); err != nil {
		return err
	}
	for _, b := range blobs {
		name := "blobs/sha256/" + strings.TrimPrefix(b.digest, "sha256:")
		if b.r == nil {
			err = add(name, int64(len(b.data)), bytes.NewReader(b.data))
		} else {
			err = add(name, b.size, b.r)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
