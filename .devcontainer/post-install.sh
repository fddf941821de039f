#!/bin/bash
set -euo pipefail

echo "===================================="
echo "Kubebuilder DevContainer Setup"
echo "===================================="

# Verify running as root (required for installing to /usr/local/bin and /etc)
if [ "$(id -u)" -ne 0 ]; then
  echo "ERROR: This script must be run as root"
  exit 1
fi

echo ""
echo "Detecting system architecture..."
# Detect architecture using uname
MACHINE=$(uname -m)
case "${MACHINE}" in
  x86_64)
    ARCH="amd64"
    ;;
  aarch64|arm64)
    ARCH="arm64"
    ;;
  *)
    echo "WARNING: Unsupported architecture ${MACHINE}, defaulting to amd64"
    ARCH="amd64"
    ;;
esac
echo "Architecture: ${ARCH}"

echo ""
echo "------------------------------------"
echo "Setting up bash completion..."
echo "------------------------------------"

BASH_COMPLETIONS_DIR="/usr/share/bash-completion/completions"

# Enable bash-completion in root's .bashrc (devcontainer runs as root)
if ! grep -q "source /usr/share/bash-completion/bash_completion" ~/.bashrc 2>/dev/null; then
  echo 'source /usr/share/bash-completion/bash_completion' >> ~/.bashrc
  echo "Added bash-completion to .bashrc"
fi

echo ""
echo "------------------------------------"
echo "Installing development tools..."
echo "------------------------------------"

# install_tool NAME URL downloads NAME from URL into /usr/local/bin, unless
# NAME is already on the PATH.
install_tool() {
  local name="$1" url="$2"
  if ! command -v "${name}" &> /dev/null; then
    echo "Installing ${name}..."
    curl -Lo "/usr/local/bin/${name}" "${url}"
    chmod +x "/usr/local/bin/${name}"
    echo "${name} installed successfully"
  fi
}

# install_completion NAME writes NAME's bash completion, if NAME is on the
# PATH.
install_completion() {
  local name="$1"
  if command -v "${name}" &> /dev/null; then
    if "${name}" completion bash > "${BASH_COMPLETIONS_DIR}/${name}" 2>/dev/null; then
      echo "${name} completion installed"
    else
      echo "WARNING: Failed to generate ${name} completion"
    fi
  fi
}

install_tool kind "https://kind.sigs.k8s.io/dl/latest/kind-linux-${ARCH}"
install_completion kind

install_tool kubebuilder "https://go.kubebuilder.io/dl/latest/linux/${ARCH}"
install_completion kubebuilder

# kubectl's URL names the latest stable release: look it up only to install.
if ! command -v kubectl &> /dev/null; then
  KUBECTL_VERSION=$(curl -Ls https://dl.k8s.io/release/stable.txt)
  install_tool kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${ARCH}/kubectl"
fi
install_completion kubectl

install_completion docker

echo ""
echo "------------------------------------"
echo "Configuring Docker environment..."
echo "------------------------------------"

# Wait for Docker to be ready
echo "Waiting for Docker to be ready..."
for i in {1..30}; do
  if docker info >/dev/null 2>&1; then
    echo "Docker is ready"
    break
  fi
  if [ "$i" -eq 30 ]; then
    echo "WARNING: Docker not ready after 30s"
  fi
  sleep 1
done

# Create kind network (ignore if already exists)
if ! docker network inspect kind >/dev/null 2>&1; then
  if docker network create kind >/dev/null 2>&1; then
    echo "Created kind network"
  else
    echo "WARNING: Failed to create kind network (may already exist)"
  fi
fi

echo ""
echo "------------------------------------"
echo "Verifying installations..."
echo "------------------------------------"
kind version
kubebuilder version
kubectl version --client
docker --version
go version

echo ""
echo "===================================="
echo "DevContainer ready!"
echo "===================================="
echo "All development tools installed successfully."
echo "You can now start building Kubernetes operators."
