#!/usr/bin/env bash
# Runs the end-to-end specs on a kind cluster: MetalLB v0.15.2 from its
# manifests, both images built and loaded, both charts installed in order.
# Needs Docker and internet; machines without them use `make test-e2e`.
#
# Environment: KIND, HELM, KUBECTL, CONTAINER_TOOL (defaults: on PATH, docker),
# KIND_CLUSTER (default address-controller-e2e), KEEP_CLUSTER=1 to keep it.
set -euo pipefail

cd "$(dirname "$0")/.."
KIND=${KIND:-kind}
HELM=${HELM:-helm}
KUBECTL=${KUBECTL:-kubectl}
CONTAINER_TOOL=${CONTAINER_TOOL:-docker}
KIND_CLUSTER=${KIND_CLUSTER:-address-controller-e2e}
METALLB_VERSION=v0.15.2
TAG=e2e
CORE_IMAGE=ghcr.io/cozystack/address-controller:${TAG}
DRIVER_IMAGE=ghcr.io/cozystack/metallb-iad:${TAG}

workdir=$(mktemp -d)
export KUBECONFIG=${workdir}/kubeconfig
cleanup() {
  if [ "${KEEP_CLUSTER:-}" != 1 ]; then
    "${KIND}" delete cluster --name "${KIND_CLUSTER}" || true
  fi
  rm -rf "${workdir}"
}
trap cleanup EXIT

"${KIND}" create cluster --name "${KIND_CLUSTER}" --kubeconfig "${KUBECONFIG}" --wait 2m

"${KUBECTL}" apply -f "https://raw.githubusercontent.com/metallb/metallb/${METALLB_VERSION}/config/manifests/metallb-native.yaml"
"${KUBECTL}" -n metallb-system rollout status deployment/controller --timeout 3m

"${CONTAINER_TOOL}" build --build-arg BINARY=address-controller -t "${CORE_IMAGE}" .
"${CONTAINER_TOOL}" build --build-arg BINARY=metallb-iad -t "${DRIVER_IMAGE}" .
"${KIND}" load docker-image --name "${KIND_CLUSTER}" "${CORE_IMAGE}" "${DRIVER_IMAGE}"

install() { # release namespace image
  "${HELM}" upgrade --install "$1" "charts/$1" --namespace "$2" --create-namespace \
    --set "image.repository=${3%:*}" --set "image.tag=${3##*:}" --set image.pullPolicy=IfNotPresent --wait --timeout 3m
}
install address-controller address-controller-system "${CORE_IMAGE}"
install metallb-iad metallb-iad-system "${DRIVER_IMAGE}"

E2E_HARNESS=kind KUBECTL="${KUBECTL}" HELM="${HELM}" E2E_CORE_IMAGE="${CORE_IMAGE}" E2E_DRIVER_IMAGE="${DRIVER_IMAGE}" \
  go test -tags=e2e ./test/e2e/ -count=1 -timeout 60m -v -ginkgo.v -ginkgo.label-filter='!wire'
