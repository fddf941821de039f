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
	"context"
	"encoding/json"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the metadata merge patches a driver writes on Services.
const (
	MetaAnnotations = "annotations"
	MetaLabels      = "labels"
	MetaFinalizers  = "finalizers"
	// MetaRemoveFinalizers removes the finalizers it lists, one by one.
	MetaRemoveFinalizers = "$deleteFromPrimitiveList/finalizers"
)

// PatchMeta applies a strategic merge patch to svc's metadata: maps merge,
// nil deletes a key, and finalizers are added or removed one by one. A
// driver never writes a Service back whole (its cache trims them).
func PatchMeta(ctx context.Context, c client.Writer, svc *corev1.Service, meta map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(c.Patch(ctx, svc, client.RawPatch(types.StrategicMergePatchType, patch)))
}

// JoinIPs writes addresses as a pin annotation's value: comma-separated,
// in the order given.
func JoinIPs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}

// SplitIPs reads a pin annotation's value; what does not parse is skipped.
func SplitIPs(value string) []netip.Addr {
	var out []netip.Addr
	for s := range strings.SplitSeq(value, ",") {
		if ip, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil {
			out = append(out, ip)
		}
	}
	return out
}
