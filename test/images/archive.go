/*
Copyright 2026 The address-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// An Archive is one image archive Build wrote.
type Archive struct {
	Image Image
	// Ref is the reference the archive tags its image with.
	Ref string
	// Path is the archive's path: a docker-archive tarball.
	Path string
	// Size is the archive's size in bytes.
	Size int64
	// BinarySize is the size of the binary in the image.
	BinarySize int64
	// Prebuilt is the file the binary was taken from when it came from
	// Options.MetalLB; empty when Build built it.
	Prebuilt string
	// Digest is the image's manifest digest.
	Digest string
}

// epoch dates every file and the image itself, so that the same binary
// always makes the same image, digest included.
var epoch = time.Unix(0, 0).UTC()

// env is the containers' environment, as distroless' static images set it
// (less SSL_CERT_FILE: these images carry no certificate bundle; the
// managers trust the cluster's CA from their ServiceAccount).
var env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}

// WriteArchive writes the image img, holding binary, for linux/arch, as a
// docker-archive tarball at p tagged ref. The file appears whole or not at
// all. Build calls it for each of Images; a test that needs an image of a
// program of its own calls it too, so that every archive is written one
// way.
func WriteArchive(p string, ref name.Tag, img Image, binary, arch string) (Archive, error) {
	if err := checkStatic(binary, arch); err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	if path.Dir(img.Entrypoint) != "/" {
		return Archive{}, fmt.Errorf("image %s: the entrypoint %q must be a file in /", img.Name, img.Entrypoint)
	}
	fsys, size, err := layerTar(binary, img.Entrypoint[1:])
	if err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(fsys)), nil
	}, tarball.WithCompressedCaching)
	if err != nil {
		return Archive{}, fmt.Errorf("image %s: layer: %w", img.Name, err)
	}
	image, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "test/images: " + img.Entrypoint},
	})
	if err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	cf, err := image.ConfigFile()
	if err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{img.Entrypoint},
		User:       img.User,
		WorkingDir: "/",
		Env:        env,
	}
	if image, err = mutate.ConfigFile(image, cf); err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	digest, err := image.Digest()
	if err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}

	partial := p + ".partial"
	if err := tarball.WriteToFile(partial, ref, image); err != nil {
		_ = os.Remove(partial)
		return Archive{}, fmt.Errorf("image %s: writing %s: %w", img.Name, p, err)
	}
	if err := os.Rename(partial, p); err != nil {
		return Archive{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	st, err := os.Stat(p)
	if err != nil {
		return Archive{}, err
	}
	return Archive{
		Image: img, Ref: ref.String(), Path: p, Size: st.Size(),
		BinarySize: size, Digest: digest.String(),
	}, nil
}

// The files besides the binary: what distroless' static images give a
// program, less the certificates and time zones (see env).
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
	// Go's resolver reads it: the pod's /etc/hosts first, then DNS.
	nsswitch = "hosts: files dns\n"
)

// layerTar returns the layer's file system as a tar stream: a few folders
// and files, and binary at entry (a path without its leading slash),
// executable by everyone. It returns the binary's size too.
func layerTar(binary, entry string) ([]byte, int64, error) {
	f, err := os.Open(binary)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []struct {
		name     string
		mode     int64
		uid, gid int
	}{
		{"etc/", 0o755, 0, 0},
		{"home/", 0o755, 0, 0},
		{"home/nonroot/", 0o700, 65532, 65532},
		{"tmp/", 0o1777, 0, 0},
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode,
			Uid: d.uid, Gid: d.gid, ModTime: epoch,
		}); err != nil {
			return nil, 0, err
		}
	}
	for _, file := range []struct{ name, body string }{
		{"etc/passwd", passwd}, {"etc/group", group}, {"etc/nsswitch.conf", nsswitch},
	} {
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: file.name, Mode: 0o644,
			Size: int64(len(file.body)), ModTime: epoch,
		}); err != nil {
			return nil, 0, err
		}
		if _, err := io.WriteString(tw, file.body); err != nil {
			return nil, 0, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: entry, Mode: 0o755,
		Size: st.Size(), ModTime: epoch,
	}); err != nil {
		return nil, 0, err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", binary, err)
	}
	if err := tw.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), st.Size(), nil
}
