#!/usr/bin/env bash
# release-ready.sh WORKFLOW... decides whether a commit may be published:
# every named workflow's latest run for the commit's push passed. It reads
# the commit's workflow runs on stdin, newest first, one per line as
# tab-separated name, status, conclusion and event (what
#   gh api "repos/$REPO/actions/runs?head_sha=$SHA" \
#     --jq '.workflow_runs[] | [.name, .status, .conclusion // "", .event] | @tsv'
# prints), and prints, for $GITHUB_OUTPUT:
#   ready=true|false
#   waiting=<names>   (workflows not finished yet: a later run decides)
#   failed=<names>    (workflows whose latest run did not pass)
# It exits 0 either way; the workflow publishes only when ready=true.
set -euo pipefail
(( $# > 0 )) || { echo "usage: release-ready.sh WORKFLOW..." >&2; exit 2; }

declare -A latest=()
while IFS=$'\t' read -r name status conclusion event; do
	[[ $event == push ]] || continue
	[[ -v latest[$name] ]] || latest[$name]="$status/$conclusion"
done

waiting=() failed=()
for wf in "$@"; do
	if [[ ! -v latest[$wf] ]]; then
		waiting+=("$wf")
		continue
	fi
	case ${latest[$wf]} in
	completed/success) ;;
	completed/*) failed+=("$wf") ;;
	*) waiting+=("$wf") ;;
	esac
done

join() { local IFS=,; echo "$*"; }
if (( ${#waiting[@]} == 0 && ${#failed[@]} == 0 )); then
	echo "ready=true"
else
	echo "ready=false"
fi
echo "waiting=$(join "${waiting[@]}")"
echo "failed=$(join "${failed[@]}")"
