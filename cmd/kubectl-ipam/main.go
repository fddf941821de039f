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
	"os"

	// Every Kubernetes client auth plugin (exec, OIDC, ...): the plugin
	// runs with the admin's kubeconfig, whatever it authenticates with.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/internal/plugin"
)

func main() {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(plugin.Main(ctrl.SetupSignalHandler(), os.Args[1:], os.Stdout, os.Stderr))
}
