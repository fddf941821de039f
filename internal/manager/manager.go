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

package manager

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Options are the process-level settings of a manager.
type Options struct {
	// MetricsAddr is where metrics are served; "0" disables them.
	MetricsAddr string
	// SecureMetrics serves metrics over HTTPS behind Kubernetes authn/authz.
	SecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics server; empty
	// means a self-signed certificate.
	MetricsCertDir string
	// ProbeAddr is where /healthz and /readyz are served; "0" disables them.
	ProbeAddr string
	// LeaderElect makes the manager run its controllers only while it holds
	// the lease LeaderElectionID.
	LeaderElect bool
	// LeaderElectionID names the lease.
	LeaderElectionID string
	// LeaderElectionNamespace holds the lease; empty means the namespace the
	// process runs in.
	LeaderElectionNamespace string
	// PprofAddr is where Go's pprof handlers are served (/debug/pprof/);
	// "" or "0" disables them, the default. For profiling, never exposed by
	// the charts.
	PprofAddr string
	// EnableHTTP2 allows HTTP/2 on the metrics server (off by default
	// because of the HTTP/2 stream-cancellation CVEs).
	EnableHTTP2 bool
	// APICompression asks the API server to gzip its responses and watch
	// streams. Off by default: a manager runs beside the API server, where
	// compressing every watch event costs both sides CPU and saves bandwidth
	// nobody lacks (kube-controller-manager and kube-scheduler turn it off
	// for the same reason). A kubeconfig's disable-compression is honoured
	// either way.
	APICompression bool
	// Zap configures logging.
	Zap zap.Options
}

// BindFlags registers the options on fs, with leaderElectionID as the default
// lease name.
func (o *Options) BindFlags(fs *flag.FlagSet, leaderElectionID string) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to: :8443 for HTTPS, :8080 for HTTP, 0 to disable.")
	fs.BoolVar(&o.SecureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, authenticated and authorized by the API server.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-path", "",
		"Directory holding tls.crt and tls.key for the metrics server; empty means self-signed.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081",
		"The address the /healthz and /readyz endpoints bind to; 0 disables them.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false,
		"Run controllers only while holding the leader lease, so that replicas never act at once.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", leaderElectionID,
		"Name of the leader lease.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader lease; empty means the namespace the process runs in.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "",
		"The address Go's pprof handlers bind to, such as 127.0.0.1:6060; empty or 0 disables them.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics server.")
	fs.BoolVar(&o.APICompression, "api-compression", false,
		"Ask the API server to gzip responses and watch streams: for a manager far from it on a slow network.")
	o.Zap.BindFlags(fs)
}

// NewScheme returns a scheme with the Kubernetes built-in types and this
// project's API.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(localv1alpha1.AddToScheme(scheme))
	return scheme
}

// New builds a manager for cfg from the options, with health and readiness
// checks installed. tune adjusts the controller-runtime options a binary
// needs beyond these (cache scoping, say). The caller registers its
// controllers and starts it.
func (o *Options) New(cfg *rest.Config, scheme *runtime.Scheme, tune ...func(*ctrl.Options)) (ctrl.Manager, error) {
	var tlsOpts []func(*tls.Config)
	if !o.EnableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metrics := metricsserver.Options{
		BindAddress:   o.MetricsAddr,
		SecureServing: o.SecureMetrics,
		TLSOpts:       tlsOpts,
		CertDir:       o.MetricsCertDir,
	}
	if o.SecureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	opts := ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metrics,
		HealthProbeBindAddress:        o.ProbeAddr,
		PprofBindAddress:              o.PprofAddr,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	}
	CacheDefaults(&opts)
	for _, t := range tune {
		t(&opts)
	}
	if !o.APICompression {
		cfg = rest.CopyConfig(cfg)
		cfg.DisableCompression = true
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding readiness check: %w", err)
	}
	return mgr, nil
}

// CacheDefaults makes the cache lean: managed fields are dropped before
// objects are stored (they are most of a Service's bytes and no reconciler
// reads them), and unstructured objects are cached like typed ones. The
// manager's client reads its own writes before the cache has them
// (NewClientReadingOwnWrites).
func CacheDefaults(opts *ctrl.Options) {
	opts.Cache.DefaultTransform = cache.TransformStripManagedFields()
	if opts.NewClient == nil {
		opts.NewClient = NewClientReadingOwnWrites
	}
	if opts.Client.Cache == nil {
		opts.Client.Cache = &client.CacheOptions{}
	}
	opts.Client.Cache.Unstructured = true
}

// conflictRetry is how soon a pass that lost a write to a concurrent writer
// runs again: the newer object is already on its way to the cache.
const conflictRetry = 100 * time.Millisecond

// RetryConflicts wraps a reconciler so that a write refused for a stale
// resourceVersion re-runs the pass shortly, instead of being logged as an
// error and backed off. Waiting for the newer object's event is not enough:
// the other manager's writes (a status condition, say) may not pass the
// controller's predicates.
func RetryConflicts(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		}
		return res, err
	})
}

// ClockOrReal is clk, or the real clock where clk is nil: what a setup
// function passes on from options that tests fill with a fake clock.
func ClockOrReal(clk clock.PassiveClock) clock.PassiveClock {
	if clk == nil {
		return clock.RealClock{}
	}
	return clk
}
