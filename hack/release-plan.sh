#!/usr/bin/env bash
# release-plan.sh BRANCH SHA decides what the release workflow publishes for
# a commit the Tests workflow passed. BRANCH is the workflow run's head
# branch: "main", or the tag's name for a tag push. It prints, for
# $GITHUB_OUTPUT:
#   kind=main|release|none
#   version=X.Y.Z          (release: the chart's version and appVersion)
#   image_tags=t1,t2       (tags of every image)
#   binary_version=V       (what the binaries report: vX.Y.Z, or main-<sha>)
# A release is a tag vX.Y.Z[-pre] that points at SHA; its images are tagged
# X.Y.Z (and X.Y unless it is a pre-release), so that a released chart's
# default image tag, its appVersion, names an image that exists.
set -euo pipefail
branch=${1:?usage: release-plan.sh BRANCH SHA}
sha=${2:?usage: release-plan.sh BRANCH SHA}
semver='^v(([0-9]+)\.([0-9]+)\.[0-9]+)(-[0-9A-Za-z.-]+)?$'

if [[ $branch == main ]]; then
	echo "kind=main"
	echo "image_tags=main,main-${sha:0:7}"
	echo "binary_version=main-${sha:0:7}"
elif [[ $branch =~ $semver ]] && [[ $(git rev-parse -q --verify "refs/tags/$branch^{commit}" || true) == "$sha" ]]; then
	version=${BASH_REMATCH[1]}${BASH_REMATCH[4]}
	tags=$version
	[[ -n ${BASH_REMATCH[4]} ]] || tags+=",${BASH_REMATCH[2]}.${BASH_REMATCH[3]}"
	echo "kind=release"
	echo "version=$version"
	echo "image_tags=$tags"
	echo "binary_version=v$version"
else
	echo "kind=none"
fi
