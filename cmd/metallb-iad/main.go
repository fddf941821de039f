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
	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cozystack/address-controller/internal/driver/importer"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	"github.com/cozystack/address-controller/internal/manager"
)

func main() {
	var opts metallb.Options
	importer.Subcommand("metallb-iad", opts.BindImportFlags, func() importer.Backend { return metallb.ForImport(opts) })
	manager.Main("metallb-iad.local.sdn.cozystack.io", opts.BindFlags,
		func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
}
