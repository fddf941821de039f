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

package main

import (
	"slices"
	"testing"
)

func TestDifferencesRaiseEachSharedModuleToTheNewestBuildsOne(t *testing.T) {
	req := func(v string) version { return version{Required: v} }
	builds := map[string]map[string]version{
		".": {
			"k8s.io/client-go":      req("v0.37.2"),
			"k8s.io/apiextensions":  req("v0.37.2"),
			"golang.org/x/net":      req("v0.58.0"),
			"only.in/the-suite":     req("v1.0.0"),
			"github.com/same/thing": req("v1.2.3"),
		},
		"hack/tools/kube": {
			"k8s.io/client-go":      req("v0.37.0"),
			"k8s.io/apiextensions":  {Required: "v0.0.0", Replaced: "v0.37.2"},
			"golang.org/x/net":      req("v0.59.0"),
			"k8s.io/kubectl":        {Required: "v0.37.0", Replaced: "v0.37.2"},
			"github.com/same/thing": {Required: "v1.2.3", Replaced: "v1.2.3"},
		},
		"hack/tools/helm": {
			"k8s.io/kubectl":   req("v0.37.0"),
			"only.in/the-tool": req("v2.0.0"),
		},
	}
	want := []difference{
		{Dir: ".", Module: "golang.org/x/net", Have: req("v0.58.0"), Want: "v0.59.0"},
		{Dir: "hack/tools/helm", Module: "k8s.io/kubectl", Have: req("v0.37.0"), Want: "v0.37.2"},
		{Dir: "hack/tools/kube", Module: "k8s.io/apiextensions", Have: version{Required: "v0.0.0", Replaced: "v0.37.2"}, Want: "v0.37.2"},
		{Dir: "hack/tools/kube", Module: "k8s.io/client-go", Have: req("v0.37.0"), Want: "v0.37.2"},
		{Dir: "hack/tools/kube", Module: "k8s.io/kubectl", Have: version{Required: "v0.37.0", Replaced: "v0.37.2"}, Want: "v0.37.2"},
	}
	if got := differences(builds); !slices.Equal(got, want) {
		t.Fatalf("differences:\n got %v\nwant %v", got, want)
	}
}

// The tools make test builds after the control plane share its compiled
// Kubernetes libraries with vet and the tests only at the same versions.
func TestTheSuiteAndTheToolsCompileOneVersionOfEachModule(t *testing.T) {
	diffs, err := survey("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("modules at different versions; run make align-tools:\n%s", list(diffs))
	}
}
