#!/usr/bin/env bash
# npm run test:quick: lint, the typecheck of every folder and jest's fast tier, side by side (jest's
# files mostly wait on sockets and timers, which leaves CPU for the other two); lint's and the
# typecheck's output printed whole after jest's. Fails if any of the three failed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run --silent typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
npm run --silent lint >"$out/lint" 2>&1 &
lint=$!
TQ_JEST_TIER=quick npx jest --ci "$@"
jest=$?
wait "$lint"
lint_rc=$?
wait "$typecheck"
typecheck_rc=$?
printf '\n=== npm run lint (exit %s)\n' "$lint_rc"
cat "$out/lint"
printf '\n=== npm run typecheck (exit %s)\n' "$typecheck_rc"
cat "$out/typecheck"
[ "$jest" -eq 0 ] && [ "$lint_rc" -eq 0 ] && [ "$typecheck_rc" -eq 0 ]
