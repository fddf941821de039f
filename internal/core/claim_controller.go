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

package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// ClaimReconciler binds claims to addresses.
//
// Design: an IPAddress's spec.claimRef is the single record of a binding;
// everything on the claim is derived from it on every pass. A pass collects
// the addresses whose claimRef names the claim (a different UID is an earlier
// claim of the same name and is never adopted), accepts pre-bindings that fit,
// resolves the class only if a family is still missing, and binds Available
// addresses smallest name first by writing claimRef with optimistic
// concurrency, so two claims racing for one address cannot both win. A claim
// that was Bound never gets a replacement: it goes Lost until its address
// comes back. Before anything is bound or stamped, a claim is admitted to its
// class (access.go); a refused claim binds nothing and is never stamped for
// a driver. Status is computed last, by a pure function, and written once.
type ClaimReconciler struct {
	client.Client
	// APIReader reads past the cache where a stale read could lose count.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	Clock     clock.PassiveClock
	available *availableSet
	pending   *pendingBinds
	metrics   *metrics
}

// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclaims,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclaims/status,verbs=update
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddresses,verbs=get;list;watch;update;delete
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddresses/status,verbs=update
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs one pass over a claim.
func (r *ClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &v1alpha1.IPAddressClaim{}
	if err := r.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp != nil {
		return ctrl.Result{}, r.reclaim(ctx, claim)
	}

	held, preBound, err := r.collect(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs := claimObservation{
		claim: claim,
		bound: map[v1alpha1.IPFamily]*v1alpha1.IPAddress{},
		lost:  map[v1alpha1.IPFamily]*v1alpha1.IPAddress{},
		waits: map[v1alpha1.IPFamily]familyWait{},
		now:   metav1.NewTime(r.Clock.Now()),
	}
	for _, a := range held {
		obs.hold(a)
	}
	if len(missingFamilies(claim, obs.bound)) > 0 || len(preBound) > 0 {
		if obs.class, err = r.resolveClass(ctx, claim); err != nil {
			return ctrl.Result{}, err
		}
	}
	admission, err := r.admission(ctx, &obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs.admitted = admission.admitted
	// The finalizer goes on before anything can be bound to the claim.
	if err := r.ensureMetadata(ctx, claim, admission.stamp); err != nil {
		return ctrl.Result{}, err
	}
	if admission.refusal != nil {
		for _, f := range missingFamilies(claim, obs.bound) {
			obs.waits[f] = *admission.refusal
		}
		return ctrl.Result{}, r.writeStatus(ctx, claim, claimStatus(obs))
	}
	for _, a := range preBound {
		err := r.considerPreBinding(ctx, &obs, a)
		if errors.Is(err, errLostRace) {
			// Nothing is matched for the family before the pre-binding is
			// accepted.
			return ctrl.Result{RequeueAfter: lostRaceRetry}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	neverBound := claim.Status.Phase != v1alpha1.ClaimBound && claim.Status.Phase != v1alpha1.ClaimLost
	var result ctrl.Result
	for _, f := range missingFamilies(claim, obs.bound) {
		if !neverBound || obs.lost[f] != nil {
			continue
		}
		if !obs.class.resolved() {
			obs.waits[f] = familyWait{v1alpha1.ReasonWaitingForClass, "Waiting for the class to resolve: " + obs.class.message}
			continue
		}
		if !obs.class.object.Serves(f) {
			obs.waits[f] = familyWait{v1alpha1.ReasonFamilyNotServed, fmt.Sprintf(
				"IPAddressClass %s serves only %s addresses (its status.families); this claim asks for %s", obs.class.name,
				joinFamilies(obs.class.object.Status.Families), f)}
			continue
		}
		a, wait, err := r.match(ctx, claim, obs.class, f)
		if errors.Is(err, errLostRace) {
			log.FromContext(ctx).V(1).Info("Lost the race to bind an address", "family", f)
			result.RequeueAfter = lostRaceRetry
		} else if err != nil {
			return ctrl.Result{}, err
		}
		if a != nil {
			obs.hold(a)
		} else {
			obs.waits[f] = wait
		}
	}
	return result, r.writeStatus(ctx, claim, claimStatus(obs))
}

// hold records an address bound to the claim, by family.
func (o *claimObservation) hold(a *v1alpha1.IPAddress) {
	f := a.Family()
	if a.Status.Phase == v1alpha1.AddressLost {
		o.lost[f] = a
		return
	}
	if cur := o.bound[f]; cur == nil || a.Name < cur.Name {
		o.bound[f] = a
	}
}

// collect returns the addresses bound to the claim (claimRef with its UID) and
// those pre-bound to it (claimRef without a UID), each sorted by name. Bindings
// this process wrote but the cache does not show yet count as bound.
func (r *ClaimReconciler) collect(ctx context.Context, claim *v1alpha1.IPAddressClaim) (held, preBound []*v1alpha1.IPAddress, err error) {
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{indexAddressByClaim: claim.ClaimKey()}); err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, a := range r.pending.forClaim(claim.UID) {
		held = append(held, a)
		seen[a.Name] = true
	}
	for i := range list.Items {
		a := &list.Items[i]
		switch {
		case seen[a.Name]:
		case a.Spec.ClaimRef.UID == claim.UID:
			held = append(held, a)
		case a.Spec.ClaimRef.UID == "":
			preBound = append(preBound, a)
		}
	}
	byName := func(a, b *v1alpha1.IPAddress) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(held, byName)
	slices.SortFunc(preBound, byName)
	return held, preBound, nil
}

// resolveClass finds the claim's class: spec.className, else the sticky
// status.className, else the single default class.
func (r *ClaimReconciler) resolveClass(ctx context.Context, claim *v1alpha1.IPAddressClaim) (classResolution, error) {
	res := classResolution{consulted: true}
	name := claim.ClassName()
	if name == "" {
		list := &v1alpha1.IPAddressClassList{}
		if err := r.List(ctx, list, client.MatchingFields{indexDefaultClass: "true"}); err != nil {
			return res, err
		}
		var defaults []string
		for _, c := range list.Items {
			if c.DeletionTimestamp == nil {
				defaults = append(defaults, c.Name)
			}
		}
		slices.Sort(defaults)
		switch len(defaults) {
		case 0:
			res.reason = v1alpha1.ReasonNoDefaultClass
			res.message = fmt.Sprintf("spec.className is empty and no IPAddressClass is annotated %s=true", v1alpha1.AnnotationIsDefaultClass)
			return res, nil
		case 1:
			name = defaults[0]
		default:
			res.reason = v1alpha1.ReasonMultipleDefaultClasses
			res.message = fmt.Sprintf("spec.className is empty and %d classes are annotated as the default (%s); the core refuses to guess",
				len(defaults), strings.Join(defaults, ", "))
			return res, nil
		}
	}
	class := &v1alpha1.IPAddressClass{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, class); err != nil {
		if !apierrors.IsNotFound(err) {
			return res, err
		}
		res.reason, res.message = v1alpha1.ReasonClassNotFound, fmt.Sprintf("IPAddressClass %s not found", name)
		return res, nil
	}
	if class.DeletionTimestamp != nil {
		res.reason, res.message = v1alpha1.ReasonClassNotFound, fmt.Sprintf("IPAddressClass %s is being deleted", name)
		return res, nil
	}
	res.name, res.provisioner, res.object = class.Name, class.Spec.Provisioner, class
	res.reason = v1alpha1.ReasonResolved
	// The class's name is status.className already: the message names only
	// what the claim's status does not, the provisioner (issue 43: every
	// status write stores the message again).
	res.message = "Provisioner " + class.Spec.Provisioner
	return res, nil
}

// ensureMetadata adds the protection finalizer and sets the provisioner
// stamp as st says, in one write.
func (r *ClaimReconciler) ensureMetadata(ctx context.Context, claim *v1alpha1.IPAddressClaim, st stamp) error {
	orig := claim.DeepCopy()
	controllerutil.AddFinalizer(claim, v1alpha1.FinalizerClaimProtection)
	switch cur, ok := claim.Annotations[v1alpha1.AnnotationProvisioner]; {
	case st.keep:
	case st.provisioner == "" && ok:
		delete(claim.Annotations, v1alpha1.AnnotationProvisioner)
	case st.provisioner != "" && cur != st.provisioner:
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		claim.Annotations[v1alpha1.AnnotationProvisioner] = st.provisioner
	}
	if equality.Semantic.DeepEqual(orig.ObjectMeta, claim.ObjectMeta) {
		return nil
	}
	return r.Update(ctx, claim)
}

// writeStatus writes the claim's status if it changed.
func (r *ClaimReconciler) writeStatus(ctx context.Context, claim *v1alpha1.IPAddressClaim, st v1alpha1.IPAddressClaimStatus) error {
	orig := claim.Status.DeepCopy()
	if wrote, err := manager.UpdateStatus(ctx, r.Client, claim, func(c *v1alpha1.IPAddressClaim) { c.Status = st }); err != nil || !wrote {
		return err
	}
	if st.Phase == v1alpha1.ClaimBound && (orig.Phase == "" || orig.Phase == v1alpha1.ClaimPending) {
		r.metrics.observeBind(r.Clock.Since(claim.CreationTimestamp.Time))
	}
	for _, w := range claimWarnings(*orig, st) {
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, w.reason, w.action, "%s", w.note)
	}
	return nil
}

// reclaim applies each bound address's reclaim policy, then lets the claim go.
func (r *ClaimReconciler) reclaim(ctx context.Context, claim *v1alpha1.IPAddressClaim) error {
	if !controllerutil.ContainsFinalizer(claim, v1alpha1.FinalizerClaimProtection) {
		return nil
	}
	held, _, err := r.collect(ctx, claim)
	if err != nil {
		return err
	}
	now := metav1.NewTime(r.Clock.Now())
	for _, a := range held {
		if err := reclaimAddress(ctx, r.Client, r.Recorder, a, "claim "+claim.ClaimKey()+" was deleted", now); err != nil {
			return err
		}
	}
	if err := r.releaseAdmission(ctx, claim, admittedClass(claim)); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(claim, v1alpha1.FinalizerClaimProtection)
	if err := r.Update(ctx, claim); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.pending.forgetClaim(claim.UID)
	return nil
}
