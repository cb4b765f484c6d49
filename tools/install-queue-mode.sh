#!/usr/bin/env bash
# Installs what n8n's queue mode needs beside n8n, from Debian's packages: PostgreSQL (the database),
# Redis (the queue between the main, the workers and the webhook processes) and nginx (the
# round-robin proxy in front of the webhook processes). Nothing is started as a service: the
# project's tools run each one as an unprivileged process in a temporary folder.
# Idempotent: installs only what is missing.
set -euo pipefail
missing=()
[ -x "$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/initdb" ] || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if [ ${#missing[@]} -eq 0 ]; then
  echo "queue-mode services already installed: postgresql, redis-server, nginx"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
# Debian starts the packages' own services on install; the tools run their own copies instead.
for service in postgresql redis-server nginx; do
  $SUDO service "$service" stop >/dev/null 2>&1 || true
done
echo "installed: ${missing[*]}"
