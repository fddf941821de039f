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

package driver

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const driverPkg = "github.com/cozystack/address-controller/internal/driver"

// backendOf names the backend a package of the driver tree belongs to, or ""
// for the framework (the driver package, controllers, drivertest, placeholder, importer,
// and classparams, the class parameters every backend reads alike).
func backendOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, driverPkg+"/")
	if !ok {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	if first == "controllers" || first == "drivertest" || first == "placeholder" || first == "importer" || first == "classparams" {
		return ""
	}
	return first
}

// TestTheFrameworkImportsNoBackend: the framework imports no backend and no
// backend imports another, test files included (go list over the whole
// driver tree, with every build tag a test of it uses).
func TestTheFrameworkImportsNoBackend(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags=e2e,cilium", "-test",
		"-f", `{{.ImportPath}} {{join .Imports " "}}`, driverPkg+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var seen []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		// A test variant is listed as "pkg [pkg.test]"; its imports follow.
		pkg, imports := fields[0], fields[1:]
		if len(imports) > 0 && strings.HasPrefix(imports[0], "[") {
			imports = imports[1:]
		}
		if strings.HasSuffix(pkg, ".test") {
			continue // the generated main of a test binary
		}
		pkg = strings.TrimSuffix(pkg, "_test")
		seen = append(seen, pkg)
		from := backendOf(pkg)
		for _, imp := range imports {
			imp = strings.TrimSuffix(imp, "_test")
			to := backendOf(imp)
			if !strings.HasPrefix(imp, driverPkg+"/") || to == "" || to == from {
				continue
			}
			if from == "" {
				t.Errorf("the framework package %s imports the backend package %s", pkg, imp)
			} else {
				t.Errorf("the %s backend (%s) imports the %s backend (%s)", from, pkg, to, imp)
			}
		}
	}
	for _, want := range []string{driverPkg, driverPkg + "/drivertest", driverPkg + "/importer", driverPkg + "/metallb", driverPkg + "/cilium"} {
		if !slices.Contains(seen, want) {
			t.Errorf("go list did not list %s; the check would prove nothing of it", want)
		}
	}
}
