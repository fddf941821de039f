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

package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// unhold asks b, if it is a Holder, to make way for a workload; a backend
// without holds has nothing in the way.
func unhold(ctx context.Context, b driver.Backend, a *v1alpha1.IPAddress) (bool, error) {
	if h, ok := b.(driver.Holder); ok {
		return h.Unhold(ctx, a)
	}
	return true, nil
}

// isHolder asks b, if it is a Holder, whether svc is a's hold.
func isHolder(b driver.Backend, svc *corev1.Service, a *v1alpha1.IPAddress) bool {
	h, ok := b.(driver.Holder)
	return ok && h.IsHolder(svc, a)
}

// releasing asks b, if it is a Releaser, whether svc is letting go.
func releasing(b driver.Backend, svc *corev1.Service) bool {
	r, ok := b.(driver.Releaser)
	return ok && r.Releasing(svc)
}
