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
	"flag"
	"os"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/internal/driver/cilium"
	"github.com/cozystack/address-controller/internal/manager"
)

func main() {
	var mgrOpts manager.Options
	var driverOpts cilium.Options
	// Its own lease: a cluster may run this driver beside metallb-iad, each
	// serving its own classes.
	mgrOpts.BindFlags(flag.CommandLine, "cilium-iad.local.sdn.cozystack.io")
	driverOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&mgrOpts.Zap)))
	log := ctrl.Log.WithName("setup")

	mgr, err := mgrOpts.New(ctrl.GetConfigOrDie(), manager.NewScheme(), driverOpts.ManagerOptions)
	if err != nil {
		log.Error(err, "Failed to create manager")
		os.Exit(1)
	}
	if err := cilium.Setup(mgr, driverOpts); err != nil {
		log.Error(err, "Failed to set up the driver controllers")
		os.Exit(1)
	}
	log.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Failed to run manager")
		os.Exit(1)
	}
}
