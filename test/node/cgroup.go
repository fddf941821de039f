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

package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupTree is a node's cgroup, the same path in every hierarchy: kubelet
// takes it as its cgroup root (and makes kubepods below it); the node's
// daemons run in its "system" child.
type cgroupTree struct {
	// root is the cgroup path, as kubelet's cgroupRoot takes it.
	root string
	// mounts are the mount points of every cgroup hierarchy.
	mounts []string
	// parents are the folders above root that makeCgroups created (the
	// test process's cgroup exists in one hierarchy only), deepest first.
	parents []string
}

// systemCgroup is the child of a node's cgroup that its daemons join.
const systemCgroup = "system"

// makeCgroups creates cgroup name below this process's own cgroup in every
// hierarchy (so the node counts against whatever limits the test process
// is under), and its system child.
func makeCgroups(name string) (*cgroupTree, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	parent, err := ownCgroup()
	if err != nil {
		return nil, err
	}
	t := &cgroupTree{root: path.Join(parent, name), mounts: mounts}
	for _, m := range mounts {
		created, err := mkdirCgroup(m, path.Join(t.root, systemCgroup))
		for _, d := range created {
			if len(d) < len(filepath.Join(m, t.root)) {
				t.parents = append([]string{d}, t.parents...)
			}
		}
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

// dirs are the node's cgroup folders, one per hierarchy.
func (t *cgroupTree) dirs() []string {
	out := make([]string, 0, len(t.mounts))
	for _, m := range t.mounts {
		out = append(out, filepath.Join(m, t.root))
	}
	return out
}

// joinFiles are the cgroup.procs files a daemon writes its process id to,
// one per hierarchy.
func (t *cgroupTree) joinFiles() []string {
	out := make([]string, 0, len(t.mounts))
	for _, d := range t.dirs() {
		out = append(out, filepath.Join(d, systemCgroup, "cgroup.procs"))
	}
	return out
}

// processes are the ids of every process in the node's cgroups.
func (t *cgroupTree) processes() []int {
	seen := map[int]bool{}
	for _, d := range t.dirs() {
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(p)
			for f := range strings.FieldsSeq(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	return out
}

// kill ends every process of the node: containers and shims are no
// children of the test process, and outlive containerd.
func (t *cgroupTree) kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := t.processes()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of cgroup %s outlived SIGKILL", pids, t.root)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remove deletes the node's cgroups, deepest first (they must be empty),
// and the parents it created unless another node still uses them.
func (t *cgroupTree) remove() error {
	defer func() {
		for _, p := range t.parents {
			_ = syscall.Rmdir(p)
		}
	}()
	var errs []error
	for _, d := range t.dirs() {
		var all []string
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		for _, a := range slices.Backward(all) {
			if err := syscall.Rmdir(a); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", a, err))
			}
		}
	}
	return errors.Join(errs...)
}

// cgroupMounts lists the mount points of the cgroup hierarchies, v1 and the
// hybrid layout's unified one.
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		// ID parent major:minor root mountpoint options... - fstype source superoptions
		fields := strings.Fields(s.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if fs := fields[sep+1]; fs == "cgroup" || fs == "cgroup2" {
			out = append(out, fields[4])
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted")
	}
	return out, s.Err()
}

// ownCgroup is this process's deepest cgroup path across the v1
// hierarchies (on these machines the memory hierarchy places the test
// process below its root, the others do not).
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	deepest := "/"
	depth := func(p string) int { return len(strings.FieldsFunc(p, func(r rune) bool { return r == '/' })) }
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[1] == "" { // the unified hierarchy's line has no controllers
			continue
		}
		if depth(parts[2]) > depth(deepest) {
			deepest = parts[2]
		}
	}
	return deepest, nil
}

// mkdirCgroup creates cgroup p in the hierarchy mounted at mount, with its
// missing parents, and returns the folders it created; a new cpuset cgroup
// starts with no CPUs and no memory nodes, so each new one takes its
// parent's.
func mkdirCgroup(mount, p string) ([]string, error) {
	var created []string
	dir := mount
	for part := range strings.SplitSeq(strings.Trim(p, "/"), "/") {
		parent := dir
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return created, err
		}
		created = append(created, dir)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return created, fmt.Errorf("%s of %s: %w", f, dir, err)
			}
		}
	}
	return created, nil
}
