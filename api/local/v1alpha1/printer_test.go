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

package v1alpha1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

func counts(total int64, v4, v6 *int64) *v1alpha1.AddressCounts {
	return &v1alpha1.AddressCounts{Total: total, IPv4: v4, IPv6: v6}
}

// table asks the API server for class as kubectl get does: a Table, its
// columns from the CRD's printer columns.
func table(g Gomega, class string) *metav1.Table {
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/apis", v1alpha1.GroupVersion.Group, v1alpha1.GroupVersion.Version, "ipaddressclasses", class).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Param("includeObject", "None").DoRaw(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	tbl := &metav1.Table{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // cells keep every digit of an int64
	g.Expect(dec.Decode(tbl)).To(Succeed())
	return tbl
}

// TestClassPrinterColumns: kubectl get ipclass shows a class's capacity,
// use and what is left; -o wide adds its families and each family's counts.
func TestClassPrinterColumns(t *testing.T) {
	g := NewWithT(t)
	c := class("printed")
	kit.Make(t, g, c)
	v4, v6, usedV4, usedV6, leftV4, leftV6 := int64(16), int64(9223372036854775807), int64(3), int64(2), int64(13), int64(9223372036854775807)
	c.Status = v1alpha1.IPAddressClassStatus{
		Families:  []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6},
		Capacity:  counts(9223372036854775807, &v4, &v6),
		Used:      counts(5, &usedV4, &usedV6),
		Available: counts(9223372036854775807, &leftV4, &leftV6),
	}
	g.Expect(k8s.Status().Update(context.Background(), c)).To(Succeed())

	tbl := table(g, "printed")
	cells := map[string]any{}
	wide := map[string]bool{}
	for i, col := range tbl.ColumnDefinitions {
		cells[col.Name] = tbl.Rows[0].Cells[i]
		wide[col.Name] = col.Priority > 0
	}
	g.Expect(cells).To(And(
		HaveKeyWithValue("Capacity", json.Number("9223372036854775807")),
		HaveKeyWithValue("Used", json.Number("5")),
		HaveKeyWithValue("Available", json.Number("9223372036854775807")),
		HaveKeyWithValue("IPv4-Used", json.Number("3")),
		HaveKeyWithValue("IPv4-Capacity", json.Number("16")),
		HaveKeyWithValue("IPv6-Used", json.Number("2")),
		HaveKeyWithValue("IPv6-Capacity", json.Number("9223372036854775807")),
		HaveKeyWithValue("Families", ContainSubstring("IPv6")),
	))
	g.Expect(wide).To(Equal(map[string]bool{
		"Name": false, "Provisioner": false, "Reclaim": false, "Release-Delay": false, "Default": false,
		"Namespaces": false, "Per-Namespace": false, "Rendered": false,
		"Capacity": false, "Used": false, "Available": false,
		"Families": true, "IPv4-Used": true, "IPv4-Capacity": true, "IPv6-Used": true, "IPv6-Capacity": true,
		"Age": false,
	}), "the counts by default, the families in -o wide")
}

// TestClassCountsAreNeverNegative: a count below zero is refused.
func TestClassCountsAreNeverNegative(t *testing.T) {
	g := NewWithT(t)
	c := class("negative")
	kit.Make(t, g, c)
	minus := int64(-1)
	c.Status.Used = counts(0, &minus, nil)
	expectInvalid(g, k8s.Status().Update(context.Background(), c), "status.used.ipv4", "should be greater than or equal to 0")
}
