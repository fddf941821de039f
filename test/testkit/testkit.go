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
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Kit reads and writes through one client.
type Kit struct {
	client.Client

	tidying *Tidying
	tidies  *sync.Map // *testing.T -> *tidy
	mu      sync.Mutex
}

// New returns a kit for c.
func New(c client.Client) *Kit { return &Kit{Client: c} }

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// Name turns the test's name into a short object name, unique per run.
func Name(t *testing.T) string {
	base := strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = base[len(base)-40:]
	}
	return strings.Trim(base, "-") + "-" + rand.String(4)
}

// Namespace creates a namespace for the test (removed when it ends, if the
// kit tidies).
func (k *Kit) Namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Name(t)}}
	if err := k.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	if r := k.record(t); r != nil {
		k.mu.Lock()
		r.namespaces = append(r.namespaces, ns.Name)
		k.mu.Unlock()
	}
	return ns.Name
}

// Create creates objects, failing the test on the first error.
func (k *Kit) Create(g Gomega, objs ...client.Object) {
	for _, o := range objs {
		g.Expect(k.Client.Create(context.Background(), o)).To(Succeed(), "creating %s", o.GetName())
	}
}

// CreateConcurrently creates objects from 20 goroutines at once.
func (k *Kit) CreateConcurrently(g Gomega, objs ...client.Object) {
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	sem := make(chan struct{}, 20)
	for _, o := range objs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- k.Client.Create(context.Background(), o)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
}

// Claim reads a claim.
func (k *Kit) Claim(g Gomega, ns, name string) *v1alpha1.IPAddressClaim {
	c := &v1alpha1.IPAddressClaim{}
	g.Expect(k.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c
}

// Address reads an address.
func (k *Kit) Address(g Gomega, name string) *v1alpha1.IPAddress {
	a := &v1alpha1.IPAddress{}
	g.Expect(k.Get(context.Background(), client.ObjectKey{Name: name}, a)).To(Succeed())
	return a
}

// Service reads a Service.
func (k *Kit) Service(g Gomega, ns, name string) *corev1.Service {
	s := &corev1.Service{}
	g.Expect(k.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// Holders lists "namespace/name" of every Service whose load balancer
// reports ip.
func (k *Kit) Holders(g Gomega, ip string) func() []string {
	return func() []string {
		list := &corev1.ServiceList{}
		g.Expect(k.List(context.Background(), list)).To(Succeed())
		var out []string
		for _, s := range list.Items {
			for _, in := range s.Status.LoadBalancer.Ingress {
				if in.IP == ip {
					out = append(out, s.Namespace+"/"+s.Name)
				}
			}
		}
		return out
	}
}

// Ingress lists the IPs a Service's load balancer reports, in order.
func (k *Kit) Ingress(g Gomega, ns, name string) func() []string {
	return func() []string {
		ingress := k.Service(g, ns, name).Status.LoadBalancer.Ingress
		out := make([]string, 0, len(ingress))
		for _, in := range ingress {
			out = append(out, in.IP)
		}
		return out
	}
}

// Gone reports whether obj no longer exists.
func (k *Kit) Gone(obj client.Object) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	}
}

// Finalizers reads obj's finalizers.
func (k *Kit) Finalizers(g Gomega, obj client.Object) []string {
	g.Expect(k.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return obj.GetFinalizers()
}

// ClaimState is what a test waits for on a claim.
type ClaimState struct {
	Phase     v1alpha1.IPAddressClaimPhase
	Reason    string
	Addresses []string
}

// StateOfClaim reads a claim's phase, Bound reason and address names.
func (k *Kit) StateOfClaim(g Gomega, ns, name string) func() ClaimState {
	return func() ClaimState {
		c := k.Claim(g, ns, name)
		s := ClaimState{Phase: c.Status.Phase, Reason: Reason(c.Status.Conditions, v1alpha1.ConditionBound)}
		for _, a := range c.Status.Addresses {
			s.Addresses = append(s.Addresses, a.Name)
		}
		return s
	}
}

// AddressState is what a test waits for on an address.
type AddressState struct {
	Phase  v1alpha1.IPAddressPhase
	Reason string
	Claim  string
}

// StateOfAddress reads an address's phase, Bound reason and claim.
func (k *Kit) StateOfAddress(g Gomega, name string) func() AddressState {
	return func() AddressState {
		a := k.Address(g, name)
		s := AddressState{Phase: a.Status.Phase, Reason: Reason(a.Status.Conditions, v1alpha1.ConditionBound)}
		if a.Spec.ClaimRef != nil {
			s.Claim = a.Spec.ClaimRef.Key()
		}
		return s
	}
}

// AddressReason reads the reason of an address's condition of type typ.
func (k *Kit) AddressReason(g Gomega, name, typ string) func() string {
	return func() string { return Reason(k.Address(g, name).Status.Conditions, typ) }
}

// Reason is the reason of the condition of type typ, or "".
func Reason(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Reason
	}
	return ""
}

// Condition returns the condition of type typ, or an empty one.
func Condition(conds []metav1.Condition, typ string) metav1.Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// EventsAbout returns the notes of the events with reason about obj.
func (k *Kit) EventsAbout(g Gomega, obj client.Object, reason string) func() []string {
	return k.events(g, obj, func(e *eventsv1.Event) (string, bool) { return e.Note, e.Reason == reason })
}

// APIServerRepair is the kube-apiserver's ClusterIP repair loop, which can
// warn about a Service created while its cluster IP was being allocated
// ("ClusterIPNotAllocated ... repairing"): a race of the API server's own,
// never about what a driver or its allocator did.
const APIServerRepair = "ipallocator-repair-controller"

// WarningsAbout returns "reason: note" of every Warning event about obj,
// whoever emitted it but the API server's ClusterIP repair loop.
func (k *Kit) WarningsAbout(g Gomega, obj client.Object) func() []string {
	return k.events(g, obj, func(e *eventsv1.Event) (string, bool) {
		return e.Reason + ": " + e.Note, e.Type == corev1.EventTypeWarning && e.ReportingController != APIServerRepair
	})
}

// events returns what pick makes of each event about obj it keeps.
func (k *Kit) events(g Gomega, obj client.Object, pick func(*eventsv1.Event) (string, bool)) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		g.Expect(k.List(context.Background(), list)).To(Succeed())
		var out []string
		for i := range list.Items {
			if e := &list.Items[i]; e.Regarding.UID == obj.GetUID() {
				if s, ok := pick(e); ok {
					out = append(out, s)
				}
			}
		}
		return out
	}
}

// SetAnnotation sets (or, with an empty value, removes) an annotation,
// retrying on conflicts.
func (k *Kit) SetAnnotation(g Gomega, obj client.Object, key, value string) {
	g.Eventually(func() error {
		if err := k.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if value == "" {
			delete(ann, key)
		} else {
			ann[key] = value
		}
		obj.SetAnnotations(ann)
		return k.Update(context.Background(), obj)
	}).Should(Succeed())
}

// FinalizerClearingScript is the operating manual's procedure for clearing
// the finalizers by hand when the controllers are gone, verbatim. Tests run
// it with bash and the pinned kubectl first on PATH.
const FinalizerClearingScript = `
kubectl get ipaddressclaims.local.sdn.cozystack.io -A \
  -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name}{"\n"}{end}' |
  while read -r ns name; do
    kubectl -n "$ns" patch ipaddressclaims.local.sdn.cozystack.io "$name" \
      --type=merge -p '{"metadata":{"finalizers":null}}'
  done
for kind in ipaddresses ipaddressclasses; do
  kubectl get "$kind.local.sdn.cozystack.io" -o name |
    xargs -r -n1 kubectl patch --type=merge -p '{"metadata":{"finalizers":null}}'
done
`

// CarrierFinalizerScript is the operating manual's procedure for deleting a
// carrying Service while the driver is down, verbatim.
const CarrierFinalizerScript = `
kubectl get services -A \
  -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.metadata.finalizers}{"\n"}{end}' |
  grep 'metallb.drivers.local.sdn.cozystack.io/carrier' |
  while read -r ns name _; do
    kubectl -n "$ns" patch service "$name" \
      -p '{"metadata":{"$deleteFromPrimitiveList/finalizers":["metallb.drivers.local.sdn.cozystack.io/carrier"]}}'
  done
`

// ClaimingServiceYAML is a LoadBalancer Service naming a claim, as the YAML
// an end-to-end spec applies with kubectl, as a tenant would: selector
// app=<name>, port 80, no node ports.
func ClaimingServiceYAML(ns, name, claim string) string {
	return ServiceYAML(ns, name, map[string]string{v1alpha1.AnnotationIPAddressClaim: claim})
}

// ClassYAML is a class of provisioner, as the YAML an admin applies with
// kubectl; spec is the rest of its spec, as YAML indented under spec (what
// it leaves out, the API server defaults).
func ClassYAML(name, provisioner, spec string) string {
	return `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClass
metadata: {name: ` + name + `}
spec:
  provisioner: ` + provisioner + spec
}

// ClaimYAML is a claim of class, as the YAML a tenant writes.
func ClaimYAML(ns, name, class string) string {
	return `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata: {name: ` + name + `, namespace: ` + ns + `}
spec: {className: ` + class + `}
`
}

// ServiceYAML is a LoadBalancer Service with annotations, as the YAML a
// tenant writes: selector app=<name>, port 80, no node ports.
func ServiceYAML(ns, name string, annotations map[string]string) string {
	keys := make([]string, 0, len(annotations))
	for k, v := range annotations {
		keys = append(keys, fmt.Sprintf("%q: %q", k, v))
	}
	slices.Sort(keys)
	return `
apiVersion: v1
kind: Service
metadata:
  name: ` + name + `
  namespace: ` + ns + `
  annotations: {` + strings.Join(keys, ", ") + `}
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: ` + name + `}
  ports: [{port: 80}]
`
}

// NextSecond sleeps until just after the wall clock's next whole second,
// shared with the API server on this machine: objects created in the
// moments after it share their creation timestamp, which has second
// precision. A test that races two objects on a tie calls it first.
func NextSecond() {
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
}

// StressEnv, set to 1, makes tests that sample a rate run their full count
// (make test-stress); make test runs a small one, enough to prove the
// behaviour once.
const StressEnv = "TEST_STRESS"

// Rounds is quick, or stress under make test-stress.
func Rounds(quick, stress int) int {
	if os.Getenv(StressEnv) == "1" {
		return stress
	}
	return quick
}

// Parallel makes the package's tests that call t.Parallel run n at a time,
// unless -parallel was given: a package whose tests wait on an API server
// and MetalLB rather than the CPU calls it in TestMain. (Go's default is
// GOMAXPROCS, two on CI; make test cannot pass -parallel to every package,
// since Ginkgo's suites refuse it.)
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
