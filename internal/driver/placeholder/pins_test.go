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

package placeholder

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// testPins has every kind of key a backend names: a pin with an alias, a
// sharing key with a grant, and sharing aliases.
var testPins = Pins{
	IPs: "pin", Aliases: []string{"pin-alias"},
	SharingKey: "share", Grants: map[string]string{"grant": "placeholders"},
	SharingAliases: []string{"share-alias"},
}

func service(annotations map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "tenant", Annotations: annotations}}
}

func TestPinWritesTheKeysTheBackendNames(t *testing.T) {
	addrs := []netip.Addr{netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("2001:db8::7")}
	const value = "198.51.100.7,2001:db8::7"
	for _, tc := range []struct {
		name      string
		svc       *corev1.Service
		key       string
		finalizer string
		want      map[string]any
	}{
		{"a gap handoff", service(nil), "", "",
			map[string]any{
				MetaAnnotations: map[string]any{"pin": value, v1alpha1.AnnotationPinnedBy: value},
				MetaLabels:      map[string]any{v1alpha1.LabelWithdrawn: nil}}},
		{"a shared handoff, with the carrier finalizer", service(nil), "k1", "carrier",
			map[string]any{
				MetaAnnotations: map[string]any{"pin": value, v1alpha1.AnnotationPinnedBy: value,
					"share": "k1", v1alpha1.AnnotationSharedBy: "k1", "grant": "placeholders"},
				MetaLabels:     map[string]any{v1alpha1.LabelWithdrawn: nil},
				MetaFinalizers: []string{"carrier"}}},
		{"a gap handoff drops the key the driver wrote", service(map[string]string{"share": "k1", v1alpha1.AnnotationSharedBy: "k1"}), "", "",
			map[string]any{
				MetaAnnotations: map[string]any{"pin": value, v1alpha1.AnnotationPinnedBy: value,
					"share": nil, v1alpha1.AnnotationSharedBy: nil, "grant": nil},
				MetaLabels: map[string]any{v1alpha1.LabelWithdrawn: nil}}},
		{"a gap handoff keeps a key the tenant wrote", service(map[string]string{"share": "mine"}), "", "",
			map[string]any{
				MetaAnnotations: map[string]any{"pin": value, v1alpha1.AnnotationPinnedBy: value},
				MetaLabels:      map[string]any{v1alpha1.LabelWithdrawn: nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := testPins.Pin(tc.svc, addrs, tc.key, tc.finalizer); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Pin = %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestPinnedToReadsThePinItsAliasesAndTheSpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		svc    *corev1.Service
		want   string
		driver bool
	}{
		{"the driver's pin", service(map[string]string{"pin": "198.51.100.7", v1alpha1.AnnotationPinnedBy: "198.51.100.7"}), "198.51.100.7", true},
		{"a pin the tenant changed", service(map[string]string{"pin": "198.51.100.8", v1alpha1.AnnotationPinnedBy: "198.51.100.7"}), "198.51.100.8", false},
		{"an alias", service(map[string]string{"pin-alias": "198.51.100.9"}), "198.51.100.9", false},
		{"nothing", service(nil), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, driver := testPins.PinnedTo(tc.svc)
			if JoinIPs(got) != tc.want || driver != tc.driver {
				t.Errorf("PinnedTo = %v, %v; want %s, %v", got, driver, tc.want, tc.driver)
			}
		})
	}
	svc := service(nil)
	svc.Spec.LoadBalancerIP = "198.51.100.10"
	if got, _ := testPins.PinnedTo(svc); JoinIPs(got) != "198.51.100.10" {
		t.Errorf("PinnedTo(spec.loadBalancerIP) = %v", got)
	}
}

func TestHandWrittenSharingRefusesAShare(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		ok          bool
	}{
		{"no sharing annotation", nil, true},
		{"the driver's own key and grant", map[string]string{"share": "k1", v1alpha1.AnnotationSharedBy: "k1", "grant": "placeholders"}, true},
		{"a key of the tenant's", map[string]string{"share": "mine"}, false},
		{"a key the tenant changed", map[string]string{"share": "mine", v1alpha1.AnnotationSharedBy: "k1"}, false},
		{"a grant of the tenant's", map[string]string{"grant": "*"}, false},
		{"an alias, even beside the driver's key", map[string]string{"share": "k1", v1alpha1.AnnotationSharedBy: "k1", "share-alias": "k1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, message := testPins.HandWritten(service(tc.annotations))
			if ok != tc.ok || !ok && (reason != "HandWrittenSharingKey" || message == "") {
				t.Errorf("HandWritten = %v, %q, %q; want ok %v", ok, reason, message, tc.ok)
			}
		})
	}
}
