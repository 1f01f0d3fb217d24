// Command imagepack packs static binaries and a few files onto an empty base into an OCI image-layout tarball
// that `ctr images import` loads. It exists because this project's local cluster has no Docker engine and no
// registry: images are built from files on disk, deterministically (same inputs, same digest).
//
//	imagepack --name localhost/evalrun/collector:dev --out bin/images/collector.tar \
//	  --file /collector=bin/collector --entrypoint /collector
//
//	imagepack --name localhost/evalrun/screening-runner:dev --out bin/images/runner.tar \
//	  --busybox /bin/busybox --file /app/runner=bin/screening-runner --workdir /app
//
//	imagepack --name localhost/evalrun/judge:dev --out bin/images/judge.tar --rootfs bin/images/build/judge-rootfs
//
// The image has one layer holding the given root file system (--rootfs, for example Debian packages unpacked with
// dpkg-deb -x) and files plus /etc/passwd and /etc/group (root, and nonroot with uid
// 65532), /tmp (mode 1777) and /home/nonroot. It runs as --user (default 65532:65532, the nonroot user).
//
// Why this is not go-containerregistry (measured: same bytes, slower cold build, a second module):
// docs/design/image-packing.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("imagepack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		spec       Spec
		files      stringList
		dirs       stringList
		env        stringList
		labels     stringList
		entrypoint stringList
		cmd        stringList
		out        string
		digestFile string
		applets    string
	)
	fs.StringVar(&spec.Name, "name", "", "image reference, for example localhost/evalrun/collector:dev (required)")
	fs.StringVar(&out, "out", "", "output OCI image-layout tarball (required)")
	fs.StringVar(&spec.RootFS, "rootfs", "", "directory whose tree becomes the image's root file system (owned by root; setuid and setgid bits dropped)")
	fs.Var(&files, "file", "DEST=SRC[:MODE] adds file SRC at absolute path DEST (mode in octal, default: SRC's mode); repeatable")
	fs.Var(&dirs, "dir", "DEST[:MODE] adds an empty directory (default mode 0755); repeatable")
	fs.StringVar(&spec.BusyboxPath, "busybox", "", "static busybox binary to install at /bin/busybox with applet symlinks in /bin")
	fs.StringVar(&applets, "applets", "", "comma-separated applets to link (default: every applet `busybox --list` prints)")
	fs.Var(&entrypoint, "entrypoint", "one element of the entrypoint argv; repeatable")
	fs.Var(&cmd, "cmd", "one element of the default command argv; repeatable")
	fs.Var(&env, "env", "KEY=VALUE environment variable; repeatable (PATH defaults to /bin:/usr/bin:/)")
	fs.Var(&labels, "label", "KEY=VALUE image label; repeatable")
	fs.StringVar(&spec.User, "user", "65532:65532", "user the image runs as (numeric, so runAsNonRoot can verify it)")
	fs.StringVar(&spec.WorkingDir, "workdir", "/", "working directory")
	fs.StringVar(&digestFile, "digest-file", "", "write the manifest digest to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		_, _ = fmt.Fprintf(stderr, "imagepack: unexpected arguments %q\n", fs.Args())
		return 2
	}
	spec.Entrypoint, spec.Cmd, spec.Env = entrypoint, cmd, env
	if err := parseSpec(&spec, files, dirs, labels, applets); err != nil {
		_, _ = fmt.Fprintf(stderr, "imagepack: %v\n", err)
		return 2
	}
	if out == "" {
		_, _ = fmt.Fprintln(stderr, "imagepack: --out is required")
		return 2
	}
	digest, err := writeImage(spec, out)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "imagepack: %v\n", err)
		return 1
	}
	if digestFile != "" {
		if err := os.WriteFile(digestFile, []byte(digest+"\n"), 0o644); err != nil {
			_, _ = fmt.Fprintf(stderr, "imagepack: writing digest file: %v\n", err)
			return 1
		}
	}
	_, _ = fmt.Fprintf(stdout, "%s %s %s\n", spec.Name, digest, out)
	return 0
}

// parseSpec fills spec from the repeatable flags and validates it.
func parseSpec(spec *Spec, files, dirs, labels stringList, applets string) error {
	var errs []error
	if spec.Name == "" {
		errs = append(errs, errors.New("--name is required"))
	} else if _, err := parseReference(spec.Name); err != nil {
		errs = append(errs, err)
	}
	for _, f := range files {
		e, err := parseFileFlag(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		spec.Files = append(spec.Files, e)
	}
	for _, d := range dirs {
		e, err := parseDirFlag(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		spec.Dirs = append(spec.Dirs, e)
	}
	if len(labels) > 0 {
		spec.Labels = map[string]string{}
	}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("--label %q: want KEY=VALUE", l))
			continue
		}
		spec.Labels[k] = v
	}
	for _, e := range spec.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			errs = append(errs, fmt.Errorf("--env %q: want KEY=VALUE", e))
		}
	}
	if applets != "" {
		if spec.BusyboxPath == "" {
			errs = append(errs, errors.New("--applets needs --busybox"))
		}
		for _, a := range strings.Split(applets, ",") {
			if a = strings.TrimSpace(a); a != "" {
				spec.Applets = append(spec.Applets, a)
			}
		}
	}
	if !strings.HasPrefix(spec.WorkingDir, "/") {
		errs = append(errs, fmt.Errorf("--workdir %q must be absolute", spec.WorkingDir))
	}
	return errors.Join(errs...)
}
