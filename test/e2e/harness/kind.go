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

package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/address-controller/test/cluster"
)

// Kind drives a kind cluster prepared by hack/kind-e2e.sh: MetalLB from its
// manifests, both images loaded, both charts installed in order. The
// managers run as the charts' Deployments; stopping one scales it to zero.
type Kind struct {
	config     *rest.Config
	kubeconfig string
	kubectl    string
	cs         kubernetes.Interface
	// uninstalled says whether the charts are uninstalled.
	uninstalled bool
}

var _ Harness = (*Kind)(nil)

// ConnectKind connects to the cluster in $KUBECONFIG.
func ConnectKind(context.Context) (*Kind, error) {
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		return nil, fmt.Errorf("the kind harness needs KUBECONFIG; run it through make test-e2e-kind")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl = "kubectl"
	}
	return &Kind{config: cfg, kubeconfig: path, kubectl: kubectl, cs: cs}, nil
}

// Config authenticates as the kind cluster's admin.
func (k *Kind) Config() *rest.Config { return k.config }

// Kubeconfig is $KUBECONFIG.
func (k *Kind) Kubeconfig() string { return k.kubeconfig }

// Kubectl is $KUBECTL, or kubectl on PATH.
func (k *Kind) Kubectl() string { return k.kubectl }

// PlaceholderNamespace is the driver's release namespace.
func (k *Kind) PlaceholderNamespace() string { return DriverNamespace }

// StopManager scales a manager's Deployment to zero.
func (k *Kind) StopManager(ctx context.Context, m Manager) error {
	return k.scale(ctx, namespaceOf(m), string(m), 0)
}

// StartManager scales a manager's Deployment back to one.
func (k *Kind) StartManager(ctx context.Context, m Manager) error {
	return k.scale(ctx, namespaceOf(m), string(m), 1)
}

// StopMetalLB scales MetalLB's controller to zero.
func (k *Kind) StopMetalLB(ctx context.Context) error {
	return k.scale(ctx, "metallb-system", "controller", 0)
}

// StartMetalLB scales MetalLB's controller back to one.
func (k *Kind) StartMetalLB(ctx context.Context) error {
	return k.scale(ctx, "metallb-system", "controller", 1)
}

// UninstallCharts uninstalls both charts with helm ($HELM), driver first.
func (k *Kind) UninstallCharts(ctx context.Context) error {
	k.uninstalled = true
	return k.helm().UninstallCharts(ctx)
}

// InstallCharts installs both charts in order with the images
// hack/kind-e2e.sh loaded, and waits for both managers.
func (k *Kind) InstallCharts(ctx context.Context) error {
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	if err := k.helm().InstallCharts(ctx, root, imageSets(os.Getenv("E2E_CORE_IMAGE")), imageSets(os.Getenv("E2E_DRIVER_IMAGE"))); err != nil {
		return err
	}
	k.uninstalled = false
	return k.startManagers(ctx)
}

func (k *Kind) startManagers(ctx context.Context) error {
	for _, m := range []Manager{Core, Driver} {
		if err := k.StartManager(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// Restore scales MetalLB's controller back to one, installs the charts if
// they are uninstalled, and scales both managers back to one.
func (k *Kind) Restore(ctx context.Context) error {
	if err := k.StartMetalLB(ctx); err != nil {
		return err
	}
	if k.uninstalled {
		return k.InstallCharts(ctx)
	}
	return k.startManagers(ctx)
}

func (k *Kind) helm() Helm {
	bin := os.Getenv("HELM")
	if bin == "" {
		bin = "helm"
	}
	return Helm{Binary: bin, Kubeconfig: k.kubeconfig, Home: filepath.Join(os.TempDir(), "address-controller-e2e-helm")}
}

// imageSets turns repository:tag into the charts' image values.
func imageSets(image string) []string {
	i := strings.LastIndex(image, ":")
	if i < 0 {
		return nil
	}
	return []string{"image.repository=" + image[:i], "image.tag=" + image[i+1:], "image.pullPolicy=IfNotPresent"}
}

// Close leaves the cluster to hack/kind-e2e.sh.
func (k *Kind) Close() error { return nil }

func namespaceOf(m Manager) string {
	if m == Driver {
		return DriverNamespace
	}
	return CoreNamespace
}

// scale sets a Deployment's replicas and waits until exactly that many are
// ready.
func (k *Kind) scale(ctx context.Context, namespace, name string, replicas int32) error {
	_, err := k.cs.AppsV1().Deployments(namespace).UpdateScale(ctx, name,
		&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}},
		metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := k.cs.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == replicas && d.Status.Replicas == replicas, nil
	})
}
