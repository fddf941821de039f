//go:build node

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

package shipped_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/testkit"
)

// staticProvisioner names no driver: a static class's addresses are made by
// hand, and the core alone binds them.
const staticProvisioner = "static.example.com"

// TestCoreChart installs the core chart (charts/address-controller, its
// defaults but image.tag and image.pullPolicy) onto the nodes, from the
// address-controller image test/images writes (the Dockerfile's: /manager,
// user 65532), binds a claim of a static class through it, and scrapes its
// metrics.
//
// Artefacts: the image address-controller; the chart's templates
// crds/*.yaml (crds.enabled), deployment.yaml (the Deployment, its probes
// on the port named probes, securityContext and podSecurityContext,
// resources, the --leader-elect arguments of leaderElection, the metrics
// on :8443), serviceaccount.yaml, role.yaml, rbac/*.yaml (what the manager
// may do, its leader election Lease, metrics_auth.yaml's token and access
// reviews and metrics-reader role) and service.yaml (the metrics Service);
// the values image.repository (default), image.tag, image.pullPolicy,
// metricsCertSecret (empty: the manager's own certificate).
func TestCoreChart(t *testing.T) {
	g := NewWithT(t)
	began := installManager(t, g, harness.Core, harness.CoreNamespace, coreImage)

	// A static class: an address made by hand, and a claim the core binds
	// to it.
	class := testkit.Name(t)
	kit.Make(t, g, b.Class(class, staticProvisioner), b.Address("static-"+class, "198.51.100.7", class))
	ns := kit.Namespace(t)
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web")).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).
		Should(HaveField("Phase", v1alpha1.ClaimBound), func() string { return diagnose(context.Background(), harness.CoreNamespace) })
	t.Logf("The first claim was Bound %s after helm install", time.Since(began).Round(time.Millisecond))
	g.Expect(kit.Claim(g, ns, "web").Status.Addresses).To(ConsistOf(HaveField("Address", "198.51.100.7")))

	checkMetrics(t, g, ns)
}

// checkMetrics scrapes the core's metrics Service from the client beside
// the nodes, over TLS (the manager's own certificate, metricsCertSecret
// being empty): an anonymous request is refused (401), a ServiceAccount
// token without the chart's metrics-reader ClusterRole is forbidden (403),
// and one bound to it gets the core's metrics. The manager decides each
// with a TokenReview and a SubjectAccessReview, from its Pod.
func checkMetrics(t *testing.T, g Gomega, ns string) {
	t.Helper()
	status := func(scrape func() (int, string, error)) func() (int, error) {
		return func() (int, error) { code, _, err := scrape(); return code, err }
	}
	g.Eventually(status(metricsOf(t, g, harness.Core, harness.CoreNamespace, ns, "", false))).WithTimeout(30*time.Second).
		Should(Equal(http.StatusUnauthorized), "an anonymous scrape")
	g.Eventually(status(metricsOf(t, g, harness.Core, harness.CoreNamespace, ns, "stranger", false))).WithTimeout(30*time.Second).
		Should(Equal(http.StatusForbidden), "a token without the reader role")
	scrape := metricsOf(t, g, harness.Core, harness.CoreNamespace, ns, "scraper", true)
	g.Eventually(func(g Gomega) {
		code, body, err := scrape()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("address_controller_ipaddressclaims"))
	}).WithTimeout(30*time.Second).Should(Succeed(), "a token bound to the metrics-reader role")
}

// metricsOf returns a scrape of manager m's metrics Service (its release in
// releaseNS) from the client beside the nodes, over TLS, as ServiceAccount
// account of namespace ns ("": anonymously), which it creates, bound to the
// chart's metrics-reader ClusterRole when reader is set.
func metricsOf(t *testing.T, g Gomega, m harness.Manager, releaseNS, ns, account string, reader bool) func() (int, string, error) {
	t.Helper()
	ctx := context.Background()
	svc, err := cs.CoreV1().Services(releaseNS).Get(ctx, string(m)+"-metrics", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	url := "https://" + net.JoinHostPort(svc.Spec.ClusterIP, "8443") + "/metrics"
	token := ""
	if account != "" {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, account, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		token = tr.Status.Token
	}
	if reader {
		kit.Make(t, g, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + account},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: string(m) + "-metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: ns}},
		})
	}
	// The manager's certificate is its own, self-signed: the scrape proves
	// TLS and the token check, not the certificate's chain.
	client := nodes.Client.HTTPClient(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
	return func() (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
}

// installManager installs this repository's chart of manager m into
// namespace with helm, from the image called image (image.tag and
// image.pullPolicy set, and the values sets), has the test uninstall it when
// it ends, and waits for its Pods (rolledOut). It returns when helm install
// began.
func installManager(t *testing.T, g Gomega, m harness.Manager, namespace, image string, sets ...string) time.Time {
	t.Helper()
	return installRelease(t, g, m, namespace, filepath.Join(root, "charts", string(m)), archives[image].Ref, sets...)
}

// installRelease installs the chart in dir as the release of manager m into
// namespace, its Pods running the imported image ref, as installManager
// does, and returns when helm install began.
func installRelease(t *testing.T, g Gomega, m harness.Manager, namespace, dir, ref string, sets ...string) time.Time {
	t.Helper()
	began := time.Now()
	install(t, g, string(m), dir, namespace, append(imageValues(ref), sets...)...)
	replicas := rolledOut(g, m, namespace, ref)
	t.Logf("The %s Deployment (%d replicas) was Available %s after helm install", m, replicas, time.Since(began).Round(time.Millisecond))
	return began
}

// imageValues are the values that make a chart run the imported image ref:
// its tag (the repository is the chart's default), never pulled.
func imageValues(ref string) []string {
	return []string{"image.tag=" + tag(ref), "image.pullPolicy=Never"}
}

// tag is the tag of the image reference ref.
func tag(ref string) string { return ref[strings.LastIndex(ref, ":")+1:] }

// rolledOut waits for manager m's Deployment in namespace to be Available
// with no Pod of an earlier revision left, and checks its Pods: each on a
// harness node running the image ref, Ready, never restarted, and, with
// more than one replica, each on a node of its own (the chart's
// podAntiAffinity, "soft" by default). It returns the number of replicas.
func rolledOut(g Gomega, m harness.Manager, namespace, ref string) int {
	ctx := context.Background()
	var replicas int
	var pods *corev1.PodList
	g.Eventually(func(g Gomega) {
		dep, err := cs.AppsV1().Deployments(namespace).Get(ctx, string(m), metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(available(dep)).To(BeTrue(), "the Deployment is not Available: %+v", dep.Status)
		g.Expect(dep.Status.Replicas).To(Equal(*dep.Spec.Replicas), "Pods of an earlier revision are left: %+v", dep.Status)
		replicas = int(*dep.Spec.Replicas)
		pods, err = cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/instance=" + string(m),
		})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(HaveLen(replicas))
	}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return diagnose(ctx, namespace) })
	on := map[string]bool{}
	for _, pod := range pods.Items {
		g.Expect(nodes.Node(pod.Spec.NodeName)).NotTo(BeNil(), "the Pod %s runs on a harness node", pod.Name)
		g.Expect(on).NotTo(HaveKey(pod.Spec.NodeName), "two replicas on node %s", pod.Spec.NodeName)
		on[pod.Spec.NodeName] = true
		g.Expect(pod.Spec.Containers[0].Image).To(Equal(ref))
		g.Expect(pod.Status.ContainerStatuses).To(ConsistOf(And(
			HaveField("Ready", true), HaveField("RestartCount", BeNumerically("==", 0)),
		)))
	}
	return replicas
}

// install runs helm install of the chart in dir as release into
// namespace with the values sets (and flags, those starting with --), and
// has the test uninstall it when it ends.
func install(t *testing.T, g Gomega, release, dir, namespace string, sets ...string) {
	t.Helper()
	args := []string{"install", release, dir, "--namespace", namespace, "--create-namespace"}
	for _, s := range sets {
		if strings.HasPrefix(s, "--") {
			args = append(args, s)
		} else {
			args = append(args, "--set", s)
		}
	}
	_, err := helm.Run(context.Background(), args...)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if _, err := helm.Run(context.Background(), "uninstall", release, "--namespace", namespace, "--wait"); err != nil {
			t.Error(err)
		}
	})
}

// available says whether the Deployment's controller reports it
// Available, all its replicas updated and ready.
func available(dep *appsv1.Deployment) bool {
	condition := false
	for _, c := range dep.Status.Conditions {
		condition = condition || c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue
	}
	want := *dep.Spec.Replicas
	return condition && dep.Status.ObservedGeneration == dep.Generation && dep.Status.UpdatedReplicas == want &&
		dep.Status.ReadyReplicas == want && dep.Status.AvailableReplicas == want
}

// diagnose is what a failure message needs: the Pods of namespace, their
// logs, and the tail of every node daemon's log.
func diagnose(ctx context.Context, namespace string) string {
	var out strings.Builder
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		out.WriteString("--- Pod " + p.Name + " on " + p.Spec.NodeName + ": " + string(p.Status.Phase) + "\n")
		for _, s := range p.Status.ContainerStatuses {
			out.WriteString(s.Name + ": " + s.State.String() + "\n")
		}
		logs, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: new(int64(40))}).DoRaw(ctx)
		if err != nil {
			logs = []byte(err.Error())
		}
		out.Write(logs)
	}
	out.WriteString(nodes.LogTails(20))
	return out.String()
}
