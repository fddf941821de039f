# Images of the two managers. One Dockerfile builds both; BINARY picks which.
REGISTRY ?= ghcr.io/cozystack
TAG ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
CORE_IMG ?= $(REGISTRY)/address-controller:$(TAG)
DRIVER_IMG ?= $(REGISTRY)/metallb-iad:$(TAG)

# YEAR is fixed so that regenerating code in a later year leaves no diff.
YEAR ?= 2026

# CONTAINER_TOOL defines the container tool to be used for building images.
CONTAINER_TOOL ?= docker

# Setting SHELL to bash allows bash commands to be executed by recipes.
# Options are set to exit when a recipe line exits non-zero or a piped command fails.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRDs and each manager's ClusterRole.
	"$(CONTROLLER_GEN)" crd paths="./api/..." output:crd:artifacts:config=config/crd/bases
	mkdir -p charts/address-controller/crds
	cp config/crd/bases/*.yaml charts/address-controller/crds/
	"$(CONTROLLER_GEN)" rbac:roleName=address-controller-manager paths="./internal/core/..." output:rbac:artifacts:config=config/rbac/core
	"$(CONTROLLER_GEN)" rbac:roleName=metallb-iad-manager paths="./internal/driver/..." output:rbac:artifacts:config=config/rbac/driver

.PHONY: generate
generate: controller-gen ## Generate code containing DeepCopy, DeepCopyInto, and DeepCopyObject method implementations.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt",year=$(YEAR) paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt against code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet against code.
	go vet ./...

# Packages tested against the local control plane; test/e2e has its own target.
UNIT_PACKAGES = $$(go list ./... | grep -v /test/e2e)

.PHONY: test
test: manifests generate fmt vet control-plane ## Run every test: unit, integration and end-to-end, on the local control plane.
	KUBEBUILDER_ASSETS="$(KUBEBUILDER_ASSETS)" METALLB_ASSETS="$(METALLB_ASSETS)" \
		go test $(UNIT_PACKAGES) -coverprofile cover.out

.PHONY: lint
lint: golangci-lint ## Run golangci-lint linter
	"$(GOLANGCI_LINT)" run

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint linter and perform fixes
	"$(GOLANGCI_LINT)" run --fix

.PHONY: lint-config
lint-config: golangci-lint ## Verify golangci-lint linter configuration
	"$(GOLANGCI_LINT)" config verify

.PHONY: verify-generated
verify-generated: manifests generate ## Fail if generated files differ from what is committed.
	@git diff --exit-code -- api config charts || { echo "Generated files are stale: run 'make manifests generate' and commit."; exit 1; }

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build both manager binaries.
	go build -o bin/address-controller ./cmd/address-controller
	go build -o bin/metallb-iad ./cmd/metallb-iad

.PHONY: run-address-controller
run-address-controller: manifests generate fmt vet ## Run the core manager against the cluster in KUBECONFIG.
	go run ./cmd/address-controller

.PHONY: run-metallb-iad
run-metallb-iad: manifests generate fmt vet ## Run the MetalLB driver against the cluster in KUBECONFIG.
	go run ./cmd/metallb-iad

.PHONY: demo
demo: ## Run the product's main job on an embedded local cluster.
	@echo "make demo comes with the driver: it will start a local control plane with MetalLB and both managers."

# If you wish to build the manager image targeting other platforms you can use the --platform flag.
.PHONY: docker-build
docker-build: ## Build both manager images.
	$(CONTAINER_TOOL) build --build-arg BINARY=address-controller -t $(CORE_IMG) .
	$(CONTAINER_TOOL) build --build-arg BINARY=metallb-iad -t $(DRIVER_IMG) .

.PHONY: docker-push
docker-push: ## Push both manager images.
	$(CONTAINER_TOOL) push $(CORE_IMG)
	$(CONTAINER_TOOL) push $(DRIVER_IMG)

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: install-crds ## Install CRDs into the K8s cluster specified in ~/.kube/config.

.PHONY: install-crds
install-crds: manifests kubectl ## Apply the current CRDs to the cluster in KUBECONFIG (also over existing ones).
	"$(KUBECTL)" apply --server-side --force-conflicts -f config/crd/bases

.PHONY: uninstall
uninstall: manifests kubectl ## Uninstall CRDs from the K8s cluster specified in ~/.kube/config.
	"$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f config/crd/bases

##@ Dependencies
#
# Every tool is built from Go modules pinned under hack/tools/<tool>/go.mod,
# into bin/ (ignored), under a name that carries its version: a second build
# finds it and builds nothing. The control plane (etcd, kube-apiserver,
# kube-controller-manager, kubectl) is laid out where setup-envtest expects
# installed binaries, so KUBEBUILDER_ASSETS resolves the same way here and on a
# machine that can download them.

## Location to install dependencies to
LOCALBIN ?= $(shell pwd)/bin
TOOLS_DIR := $(shell pwd)/hack/tools
$(LOCALBIN):
	mkdir -p "$(LOCALBIN)"

# toolver reads the version of module $(2) pinned in hack/tools/$(1)/go.mod.
toolver = $(shell sed -n 's|^require $(2) \(v[^ ]*\).*|\1|p' "$(TOOLS_DIR)/$(1)/go.mod")

CONTROLLER_TOOLS_VERSION := $(call toolver,controller-gen,sigs.k8s.io/controller-tools)
KUBEBUILDER_VERSION := $(call toolver,kubebuilder,sigs.k8s.io/kubebuilder/v4)
HELM_VERSION := $(call toolver,helm,helm.sh/helm/v3)
ENVTEST_VERSION := $(call toolver,setup-envtest,sigs.k8s.io/controller-runtime/tools/setup-envtest)
KUBERNETES_VERSION := $(call toolver,kube,k8s.io/kubernetes)
ETCD_VERSION := $(call toolver,etcd,go.etcd.io/etcd/server/v3)
METALLB_VERSION := $(call toolver,metallb,go.universe.tf/metallb)
GOLANGCI_LINT_VERSION ?= v2.13.1

#ENVTEST_K8S_VERSION is the version of Kubernetes the control-plane binaries are built at.
ENVTEST_K8S_VERSION := $(KUBERNETES_VERSION:v%=%)

## Tool Binaries
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUBEBUILDER ?= $(LOCALBIN)/kubebuilder
HELM ?= $(LOCALBIN)/helm
ENVTEST ?= $(LOCALBIN)/setup-envtest
GOLANGCI_LINT = $(LOCALBIN)/golangci-lint
ENVTEST_ASSETS := $(LOCALBIN)/k8s/$(ENVTEST_K8S_VERSION)-$(shell go env GOOS)-$(shell go env GOARCH)
KUBECTL ?= $(ENVTEST_ASSETS)/kubectl
METALLB_ASSETS := $(LOCALBIN)/metallb/$(METALLB_VERSION)
KUBEBUILDER_ASSETS = $(shell "$(ENVTEST)" use $(ENVTEST_K8S_VERSION) --bin-dir "$(LOCALBIN)" -i -p path)

# Version strings the Kubernetes binaries report; without them kubectl and helm
# cannot parse the server version.
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBERNETES_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(ENVTEST_K8S_VERSION))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(ENVTEST_K8S_VERSION))) \
	-X k8s.io/component-base/version.gitTreeState=clean \
	-X k8s.io/client-go/pkg/version.gitVersion=$(KUBERNETES_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=$(word 1,$(subst ., ,$(ENVTEST_K8S_VERSION))) \
	-X k8s.io/client-go/pkg/version.gitMinor=$(word 2,$(subst ., ,$(ENVTEST_K8S_VERSION)))

# build-tool builds package $(3) of tools module hack/tools/$(2) into $(1),
# with linker flags $(4), unless $(1) exists already.
define build-tool
@[ -x "$(1)" ] || { \
set -e; \
echo "Building $(notdir $(1)) from hack/tools/$(2)"; \
mkdir -p "$(dir $(1))"; \
cd "$(TOOLS_DIR)/$(2)" && go build -ldflags '$(4)' -o "$(1).partial" $(3); \
mv "$(1).partial" "$(1)"; \
}
endef

# link-tool points the unversioned name $(1) at the versioned binary $(2).
define link-tool
@[ "$$(readlink -- "$(1)" 2>/dev/null)" = "$(2)" ] || { mkdir -p "$(dir $(1))"; ln -sf "$(2)" "$(1)"; }
endef

.PHONY: controller-gen
controller-gen: $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION) ## Build controller-gen locally if necessary.
	$(call link-tool,$(CONTROLLER_GEN),$<)
$(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION):
	$(call build-tool,$@,controller-gen,sigs.k8s.io/controller-tools/cmd/controller-gen)

.PHONY: kubebuilder
kubebuilder: $(LOCALBIN)/kubebuilder-$(KUBEBUILDER_VERSION) ## Build the kubebuilder CLI locally if necessary.
	$(call link-tool,$(KUBEBUILDER),$<)
$(LOCALBIN)/kubebuilder-$(KUBEBUILDER_VERSION):
	$(call build-tool,$@,kubebuilder,sigs.k8s.io/kubebuilder/v4)

.PHONY: helm
helm: $(LOCALBIN)/helm-$(HELM_VERSION) ## Build helm locally if necessary.
	$(call link-tool,$(HELM),$<)
$(LOCALBIN)/helm-$(HELM_VERSION):
	$(call build-tool,$@,helm,helm.sh/helm/v3/cmd/helm,-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION))

.PHONY: envtest
envtest: $(LOCALBIN)/setup-envtest-$(ENVTEST_VERSION) ## Build setup-envtest locally if necessary.
	$(call link-tool,$(ENVTEST),$<)
$(LOCALBIN)/setup-envtest-$(ENVTEST_VERSION):
	$(call build-tool,$@,setup-envtest,sigs.k8s.io/controller-runtime/tools/setup-envtest)

.PHONY: kubectl
kubectl: $(ENVTEST_ASSETS)/kubectl ## Build the pinned kubectl locally if necessary.

$(ENVTEST_ASSETS)/kube-apiserver $(ENVTEST_ASSETS)/kube-controller-manager $(ENVTEST_ASSETS)/kubectl:
	$(call build-tool,$@,kube,k8s.io/kubernetes/cmd/$(notdir $@),$(KUBE_LDFLAGS))

$(ENVTEST_ASSETS)/etcd: $(LOCALBIN)/etcd-$(ETCD_VERSION)
	$(call link-tool,$@,$<)
$(LOCALBIN)/etcd-$(ETCD_VERSION):
	$(call build-tool,$@,etcd,go.etcd.io/etcd/server/v3)

.PHONY: metallb
metallb: $(METALLB_ASSETS)/controller $(METALLB_ASSETS)/crds ## Build the MetalLB controller and copy its CRDs locally if necessary.
$(METALLB_ASSETS)/controller:
	$(call build-tool,$@,metallb,go.universe.tf/metallb/controller)
$(METALLB_ASSETS)/crds:
	@mkdir -p "$@.partial"
	cp "$$(cd "$(TOOLS_DIR)/metallb" && go list -m -f '{{.Dir}}' go.universe.tf/metallb)"/config/crd/bases/*.yaml "$@.partial/"
	chmod u+w "$@.partial"/*.yaml
	mv "$@.partial" "$@"

.PHONY: control-plane
control-plane: envtest metallb $(addprefix $(ENVTEST_ASSETS)/,etcd kube-apiserver kube-controller-manager kubectl) ## Build the local control plane (etcd, kube-apiserver, kube-controller-manager, kubectl, MetalLB) if necessary.

.PHONY: tools
tools: controller-gen kubebuilder helm control-plane ## Build every pinned tool.

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Download golangci-lint locally if necessary.
$(GOLANGCI_LINT): $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

# go-install-tool will 'go install' any package with custom target and name of binary, if it doesn't exist
# $1 - target path with name of binary
# $2 - package url which can be installed
# $3 - specific version of package
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)" 2>/dev/null)" = "$(1)-$(3)" ] || { \
set -e; \
package=$(2)@$(3) ;\
echo "Downloading $${package}" ;\
rm -f "$(1)" ;\
GOBIN="$(LOCALBIN)" go install $${package} ;\
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ;\
} ;\
ln -sf "$$(realpath "$(1)-$(3)")" "$(1)"
endef
