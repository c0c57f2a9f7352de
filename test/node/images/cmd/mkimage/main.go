// mkimage writes a single-layer OCI image layout, as a tar that `ctr images import` takes, from
// files on this machine. The output is deterministic: the same inputs give the same digests.
//
//	mkimage -out busybox.tar -name podlife.test/busybox:1 -entrypoint '["/bin/sh"]' \
//	        -file /bin/busybox=/bin/busybox -link /bin/sh=busybox -dir /tmp
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

type pairs []string

func (p *pairs) String() string     { return strings.Join(*p, ",") }
func (p *pairs) Set(v string) error { *p = append(*p, v); return nil }

type entry struct {
	name     string
	mode     int64
	typeflag byte
	target   string // symlinks
	data     []byte // regular files
}

var epoch = time.Unix(0, 0).UTC()

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mkimage: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	var files, links, dirs pairs
	out := flag.String("out", "", "output tar (OCI image layout)")
	name := flag.String("name", "", "image reference, e.g. podlife.test/busybox:1")
	entrypoint := flag.String("entrypoint", "", "JSON array")
	cmd := flag.String("cmd", "", "JSON array")
	user := flag.String("user", "", "the image's user (uid[:gid])")
	flag.Var(&files, "file", "SRC=DST: copy a file into the image (mode kept)")
	flag.Var(&links, "link", "DST=TARGET: a symlink")
	flag.Var(&dirs, "dir", "an empty directory (mode 1777 for /tmp, 0755 otherwise)")
	flag.Parse()
	if *out == "" || *name == "" {
		fail("-out and -name are required")
	}

	entries := map[string]entry{}
	addParents := func(p string) {
		for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = entry{name: d, mode: 0o755, typeflag: tar.TypeDir}
			}
		}
	}
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "/tmp" {
			mode = 0o1777
		}
		entries[d] = entry{name: d, mode: mode, typeflag: tar.TypeDir}
		addParents(d)
	}
	for _, f := range files {
		src, dst, ok := strings.Cut(f, "=")
		if !ok || !path.IsAbs(dst) {
			fail("-file %q is not SRC=/DST", f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			fail("%v", err)
		}
		st, err := os.Stat(src)
		if err != nil {
			fail("%v", err)
		}
		entries[dst] = entry{name: dst, mode: int64(st.Mode().Perm()), typeflag: tar.TypeReg, data: data}
		addParents(dst)
	}
	for _, l := range links {
		dst, target, ok := strings.Cut(l, "=")
		if !ok || !path.IsAbs(dst) {
			fail("-link %q is not /DST=TARGET", l)
		}
		entries[dst] = entry{name: dst, mode: 0o777, typeflag: tar.TypeSymlink, target: target}
		addParents(dst)
	}

	layer := layerTar(entries)
	layerDigest := digest(layer)

	config := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config":       imageConfig(*entrypoint, *cmd, *user),
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	}
	configJSON := mustJSON(config)
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor("application/vnd.oci.image.config.v1+json", configJSON),
		"layers":        []any{descriptor("application/vnd.oci.image.layer.v1.tar", layer)},
	}
	manifestJSON := mustJSON(manifest)
	tag := *name
	if i := strings.LastIndex(tag, ":"); i > strings.LastIndex(tag, "/") {
		tag = tag[i+1:]
	}
	md := descriptor("application/vnd.oci.image.manifest.v1+json", manifestJSON)
	md["annotations"] = map[string]string{"io.containerd.image.name": *name, "org.opencontainers.image.ref.name": tag}
	index := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{md}}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write := func(name string, data []byte) {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			fail("%v", err)
		}
		if _, err := tw.Write(data); err != nil {
			fail("%v", err)
		}
	}
	write("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	write("index.json", mustJSON(index))
	for _, blob := range [][]byte{layer, configJSON, manifestJSON} {
		write("blobs/sha256/"+strings.TrimPrefix(digest(blob), "sha256:"), blob)
	}
	if err := tw.Close(); err != nil {
		fail("%v", err)
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		fail("%v", err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		fail("%v", err)
	}
	fmt.Printf("%s %s %s\n", *name, digest(manifestJSON), *out)
}

func imageConfig(entrypoint, cmd, user string) map[string]any {
	c := map[string]any{"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}}
	for key, raw := range map[string]string{"Entrypoint": entrypoint, "Cmd": cmd} {
		if raw == "" {
			continue
		}
		var argv []string
		if err := json.Unmarshal([]byte(raw), &argv); err != nil {
			fail("-%s is not a JSON array of strings: %v", strings.ToLower(key), err)
		}
		c[key] = argv
	}
	if user != "" {
		c["User"] = user
	}
	return c
}

func layerTar(entries map[string]entry) []byte {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names) // parents sort before their children
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		hdr := &tar.Header{Name: strings.TrimPrefix(e.name, "/"), Mode: e.mode, ModTime: epoch, Typeflag: e.typeflag, Linkname: e.target, Format: tar.FormatPAX}
		if e.typeflag == tar.TypeDir {
			hdr.Name += "/"
		}
		if e.typeflag == tar.TypeReg {
			hdr.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			fail("%v", err)
		}
		if e.typeflag == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				fail("%v", err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		fail("%v", err)
	}
	return buf.Bytes()
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func descriptor(mediaType string, b []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": digest(b), "size": len(b)}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		fail("%v", err)
	}
	return b
}
