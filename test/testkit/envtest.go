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

package testkit

import (
	"fmt"
	"os"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/cluster"
)

// Main is the body of a test binary's TestMain over one control plane: it
// starts the control plane opts describe, connects a cluster-admin client
// to it with both binaries' scheme, and returns what run returns with them,
// stopping the control plane afterwards. An error (run's, or the control
// plane's at start) is printed and makes the exit code 1.
func Main(opts cluster.Options, run func(c *cluster.Cluster, k client.Client) (int, error)) int {
	c, err := cluster.Start(opts)
	if err != nil {
		return exit(err)
	}
	defer func() { _ = c.Stop() }()
	k, err := client.New(c.Config, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return exit(err)
	}
	return Exit(run(c, k))
}

func exit(err error) int {
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// Exit is a test binary's exit code for what its TestMain's body returned:
// code, or 1 after printing err when there is one.
func Exit(code int, err error) int {
	if err != nil {
		return exit(err)
	}
	return code
}

// SetLogger sends the in-process managers' log to stderr: errors only,
// everything once the environment variable verbose is set.
func SetLogger(verbose string) {
	level := zapcore.ErrorLevel
	if os.Getenv(verbose) != "" {
		level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(level)))
}

// MetricFamilies gathers controller-runtime's registry, which the managers
// running in the test process report to.
func MetricFamilies(g Gomega) []*dto.MetricFamily {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	return families
}

// Series are the series of the metric family name (MetricFamilies): none
// before the family has one.
func Series(g Gomega, name string) []*dto.Metric {
	for _, f := range MetricFamilies(g) {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}
