#!/usr/bin/env bash
# `npm run test:quick`: lint, the typecheck of every folder and jest's fast tier, side by side (jest's
# files mostly wait on the sandbox and the nodes' own pauses, so lint and tsc fit beside them on two
# cores). Lint's and tsc's output is printed when they end; the run fails if any of the three fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run --silent lint >"$out/lint" 2>&1 &
lint=$!
npm run --silent typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
TQ_JEST_TIER=quick npx jest --ci "$@"
jest=$?
wait "$lint"
lint_code=$?
wait "$typecheck"
typecheck_code=$?
printf '\n=== npm run lint (exit %s)\n' "$lint_code"
cat "$out/lint"
printf '\n=== npm run typecheck (exit %s)\n' "$typecheck_code"
cat "$out/typecheck"
printf '\n=== test:quick: lint %s, typecheck %s, jest %s\n' \
	"$([ $lint_code = 0 ] && echo passed || echo FAILED)" \
	"$([ $typecheck_code = 0 ] && echo passed || echo FAILED)" \
	"$([ $jest = 0 ] && echo passed || echo FAILED)"
[ "$lint_code" = 0 ] && [ "$typecheck_code" = 0 ] && [ "$jest" = 0 ]
