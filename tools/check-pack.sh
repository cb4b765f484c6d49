#!/usr/bin/env bash
# The published tarball holds dist/, README, LICENSE, CHANGELOG and package.json, and nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(npm pack --dry-run --json 2>/dev/null | node -e '
  const [pack] = JSON.parse(require("fs").readFileSync(0, "utf8"));
  for (const f of pack.files) console.log(f.path);
  console.error(`tarball ${pack.size} bytes, unpacked ${pack.unpackedSize} bytes, ${pack.entryCount} files`);
')
# dist/ holds the build of nodes/ and credentials/ and the icons; n8n-node build copies every .png
# and .svg of the project, so a documentation image in .png would ship (docs/images use .jpg)
bad=$(printf '%s\n' "$files" | grep -Ev '^(dist/(nodes|credentials|icons)/|dist/package\.json$|README\.md$|LICENSE$|CHANGELOG\.md$|package\.json$)' || true)
if [ -n "$bad" ]; then
  echo "unexpected files in the package:"; echo "$bad"; exit 1
fi
for f in dist/credentials/TaskQueueApi.credentials.js dist/nodes/TaskQueue/TaskQueue.node.js \
         dist/nodes/TaskQueue/TaskQueueTrigger.node.js dist/nodes/TaskQueue/TaskQueuePollTrigger.node.js \
         dist/nodes/TaskQueue/TaskQueue.node.json dist/icons/taskQueue.svg dist/icons/taskQueue.dark.svg \
         README.md LICENSE CHANGELOG.md package.json; do
  printf '%s\n' "$files" | grep -qx "$f" || { echo "missing from the package: $f"; exit 1; }
done
if printf '%s\n' "$files" | grep -q '\.map$'; then
  echo "note: source maps are packed" >&2
fi
echo "pack content ok ($(printf '%s\n' "$files" | wc -l) files)"
