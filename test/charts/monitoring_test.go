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

package charts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// query is one PromQL expression a chart ships, and where it sits.
type query struct{ where, expr string }

// shippedQueries renders chart with monitoring on and returns every alert
// expression of its PrometheusRule, with leader election on and off, and
// every query of its dashboard.
func shippedQueries(t *testing.T, chart string) []query {
	t.Helper()
	g := NewWithT(t)
	var qs []query
	var objs []*unstructured.Unstructured
	for _, leaderElection := range []string{"true", "false"} {
		objs = render(t, chart, chart, "monitoring", "--set", "monitoring.enabled=true", "--set", "leaderElection="+leaderElection)
		rules := ofKind(objs, "PrometheusRule")
		g.Expect(rules).To(HaveLen(1))
		groups, _, _ := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
		for _, grp := range groups {
			for _, r := range grp.(map[string]any)["rules"].([]any) {
				rule := r.(map[string]any)
				q := query{where: fmt.Sprint("alert ", rule["alert"]), expr: rule["expr"].(string)}
				if !slices.Contains(qs, q) {
					qs = append(qs, q)
				}
				g.Expect(rule).To(HaveKeyWithValue("annotations", HaveKeyWithValue("runbook_url",
					HaveSuffix("#"+strings.ToLower(rule["alert"].(string))))), "every alert links its runbook")
			}
		}
	}
	maps := ofKind(objs, "ConfigMap")
	g.Expect(maps).To(HaveLen(1))
	g.Expect(maps[0].GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
	data, _, _ := unstructured.NestedStringMap(maps[0].Object, "data")
	g.Expect(data).To(HaveLen(1))
	for file, raw := range data {
		var dash struct {
			Panels []struct {
				Title   string
				Targets []struct{ Expr string }
			}
		}
		g.Expect(json.Unmarshal([]byte(raw), &dash)).To(Succeed(), "the dashboard %s is JSON", file)
		for _, p := range dash.Panels {
			for _, target := range p.Targets {
				qs = append(qs, query{where: "panel " + p.Title, expr: target.Expr})
			}
		}
	}
	return qs
}

// scrapeSeries are the series Prometheus writes itself for every target it
// scrapes, which no manager serves.
var scrapeSeries = []string{"up"}

// metricNames parses expr with Prometheus's PromQL parser and returns the
// metric names it selects.
func metricNames(expr string) ([]string, error) {
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	return names, nil
}

// exported scrapes a manager's /metrics and returns the names of the series
// it serves: histogram families under their _bucket, _sum and _count names.
func exported(g Gomega, url string) []string {
	resp, err := http.Get(url)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for name, f := range families {
		if len(f.GetMetric()) == 0 {
			continue
		}
		names = append(names, name)
		if f.GetType().String() == "HISTOGRAM" {
			names = append(names, name+"_bucket", name+"_sum", name+"_count")
		}
	}
	return names
}

// runManager runs a manager binary against the cluster with leader election,
// serving plain-HTTP metrics on loopback, and returns its metrics URL.
func runManager(t *testing.T, c *cluster.Cluster, bin, namespace string, args ...string) string {
	t.Helper()
	metrics, probes := freeLocalPort(t), freeLocalPort(t)
	p, err := c.StartProcess(filepath.Base(bin), bin, append([]string{
		"--kubeconfig=" + c.Kubeconfig, "--leader-elect", "--leader-election-namespace=" + namespace,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metrics), "--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probes),
	}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics)
}

func freeLocalPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// TestShippedQueriesNameExportedMetrics parses every alert and dashboard
// query of every chart with Prometheus's parser, and checks that each metric
// they name is served by the /metrics endpoint of a running manager of that
// chart, once it has a class, an address, a claim and the leader lease.
func TestShippedQueriesNameExportedMetrics(t *testing.T) {
	g := NewWithT(t)
	c := startCluster(t)
	scheme := manager.NewScheme()
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	k, err := client.New(c.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	// Each driver keeps its placeholders in a namespace of its own.
	ns, ciliumPlaceholders := kit.Namespace(t), kit.Namespace(t)
	// The Cilium driver watches the pools it renders, whose kind must be
	// served; the Cilium operator itself is not needed.
	applyCRDs(t, k, ciliumPoolCRD(t, c))

	binDir := t.TempDir()
	urls := map[string]string{}
	for chart, args := range map[string][]string{
		coreChart:   nil,
		driverChart: {"--placeholder-namespace=" + ns, "--metallb-namespace=" + cluster.MetalLBNamespace},
		ciliumChart: {"--placeholder-namespace=" + ciliumPlaceholders},
	} {
		bin, err := cluster.GoBuild("./cmd/"+chart, binDir)
		g.Expect(err).NotTo(HaveOccurred())
		urls[chart] = runManager(t, c, bin, ns, args...)
	}

	// Give every per-class and per-phase series a reason to exist: a class
	// each driver serves, an address of it and a claim of it. They are a
	// subtest's, so that they go while the managers, which let go of them,
	// still run.
	t.Run("with a class, an address and a claim of each driver", func(t *testing.T) {
		g := NewWithT(t)
		tenant := kit.Namespace(t)
		class, ciliumClass := testkit.Name(t), testkit.Name(t)
		kit.Make(t, g, b.Class(class, v1alpha1.ProvisionerMetalLB, b.Parameters(`{"addresses": ["198.51.100.0/28"]}`)),
			b.Address(class+"-static", "198.51.100.3", class),
			b.Class(ciliumClass, v1alpha1.ProvisionerCilium, b.Parameters(`{"addresses": ["198.51.100.16/28"]}`)),
			b.Address(ciliumClass+"-static", "198.51.100.19", ciliumClass))
		// The typo's claim stays Pending, so that the oldest unbound claim's
		// gauge has a series.
		kit.Create(g, b.Claim(tenant, "web", b.OfClass(class)), b.Claim(tenant, "api", b.OfClass(ciliumClass)),
			b.Claim(tenant, "typo", b.OfClass(class+"-typo")))

		for _, chart := range allCharts {
			t.Run(chart, func(t *testing.T) {
				g := NewWithT(t)
				qs := shippedQueries(t, chart)
				g.Expect(qs).NotTo(BeEmpty())
				want := map[string][]string{}
				for _, q := range qs {
					names, err := metricNames(q.expr)
					g.Expect(err).NotTo(HaveOccurred(), "%s: %s does not parse", q.where, q.expr)
					g.Expect(names).NotTo(BeEmpty(), "%s selects a metric", q.where)
					for _, n := range names {
						if !slices.Contains(scrapeSeries, n) {
							want[n] = append(want[n], q.where)
						}
					}
				}
				g.Eventually(func(g Gomega) {
					have := exported(g, urls[chart])
					for name, where := range want {
						g.Expect(slices.Contains(have, name)).To(BeTrue(), "%s, used by %v, is not served by %s", name, where, chart)
					}
				}, 90*time.Second, 500*time.Millisecond).Should(Succeed())
			})
		}
	})
}

// ciliumPoolCRD is the CRD of CiliumLoadBalancerIPPool, which make
// cilium-crds copies from the pinned Cilium module.
func ciliumPoolCRD(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	f := filepath.Join(c.Assets.CiliumDir, "crds", "ciliumloadbalancerippools.yaml")
	if _, err := os.Stat(f); c.Assets.CiliumDir == "" || err != nil {
		t.Fatalf("no CiliumLoadBalancerIPPool CRD at %q: run make cilium-crds, or use make test", f)
	}
	return f
}

// selfSignedCert writes a certificate for 127.0.0.1 as tls.crt and tls.key
// into a new folder, the layout of a kubernetes.io/tls Secret's volume, and
// returns the folder and the certificate.
func selfSignedCert(t *testing.T) (string, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "metrics.example.test"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, block := range map[string]*pem.Block{
		"tls.crt": {Type: "CERTIFICATE", Bytes: der},
		"tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return dir, cert
}

// TestMetricsServeTheMountedCertificate runs the core as the chart runs it
// with metricsCertSecret, and checks that its metrics endpoint presents the
// mounted certificate, verified against it as the ServiceMonitor does.
func TestMetricsServeTheMountedCertificate(t *testing.T) {
	g := NewWithT(t)
	c := startCluster(t)
	ns := kit.Namespace(t)

	objs := render(t, coreChart, coreChart, ns, "--set", "metricsCertSecret=metrics-tls")
	var certPath string
	for _, a := range managerContainer(g, deployment(g, objs))["args"].([]any) {
		if v, ok := strings.CutPrefix(a.(string), "--metrics-cert-path="); ok {
			certPath = v
		}
	}
	g.Expect(certPath).NotTo(BeEmpty(), "the chart passes --metrics-cert-path")

	dir, cert := selfSignedCert(t)
	bin, err := cluster.GoBuild("./cmd/"+coreChart, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	url := runManager(t, c, bin, ns, "--metrics-secure=true", "--metrics-cert-path="+dir)
	url = strings.Replace(url, "http://", "https://", 1)

	roots := x509.NewCertPool()
	roots.AddCert(cert)
	tlsClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	g.Eventually(func(g Gomega) {
		resp, err := tlsClient.Get(url)
		g.Expect(err).NotTo(HaveOccurred(), "the endpoint presents a certificate the mounted one verifies")
		defer func() { _ = resp.Body.Close() }()
		g.Expect(resp.TLS.PeerCertificates[0].Equal(cert)).To(BeTrue())
		g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), "an anonymous scrape is refused")
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
}
