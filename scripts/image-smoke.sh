#!/usr/bin/env bash
# The container image's release check (docs/operations.md, "Container image"): build the image with podman,
# start it on the embedded database, wait for /readyz and the image's own HEALTHCHECK, check what runs inside
# (a non-root user under tini; ffmpeg, bubblewrap and git present), then a first session through the service
# in the container: the admin's invite → register → verify the e-mail → log in → a project → a streamed chat
# whose reply comes from the model stand-in (scripts/image-smoke-llm.ts) running on this host, reached over the
# host network. Prints each step; exits non-zero at the first failure. Run from the checkout, after
# `npm install` (the stand-in runs from it), as a user podman can build and run with.
#
#   BASE_IMAGE=debian:bookworm-slim scripts/image-smoke.sh     # a base image the engine has or can pull
#   scripts/image-smoke.sh                                      # no BASE_IMAGE: made here with debootstrap
#
# Without BASE_IMAGE, `localhost/crm-base:bookworm` is used, made first when missing: `debootstrap --variant=minbase
# bookworm` against the apt mirror this machine is configured with (MIRROR overrides it), imported with
# `podman import`. IMAGE names the built image (default localhost/crm-service:smoke); PORT the service's port on
# the host network (default 18080); KEEP=1 leaves the container running afterwards; SKIP_BUILD=1 checks the image
# IMAGE as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-localhost/crm-service:smoke}
PORT=${PORT:-18080}
NAME=crm-image-smoke-$$
B=http://127.0.0.1:$PORT
started=$(date +%s)
step() { echo "== $(($(date +%s) - started)) s: $*"; }
fail() {
  echo "FAILED: $*" >&2
  podman logs --tail 60 "$NAME" >&2 2>/dev/null || true
  exit 1
}
command -v podman >/dev/null || fail "podman is not installed"

# An engine without CAP_SYS_RESOURCE (a container or a sandbox) cannot raise a container's open-file and process
# limits to Podman's defaults: ask for what this host allows.
hard() { local v; v=$("$@"); [ "$v" = unlimited ] && v=1048576; echo "$v"; }
NOFILE=$(hard ulimit -Hn); NOFILE=$((NOFILE < 65536 ? NOFILE : 65536))
NPROC=$(hard ulimit -Hu); NPROC=$((NPROC < 32768 ? NPROC : 32768))
ULIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")

if [ -z "${BASE_IMAGE:-}" ]; then
  BASE_IMAGE=localhost/crm-base:bookworm
  if ! podman image exists "$BASE_IMAGE"; then
    command -v debootstrap >/dev/null || fail "no BASE_IMAGE and no debootstrap (apt-get install debootstrap)"
    if [ -z "${MIRROR:-}" ]; then
      MIRROR=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2; exit}')
      [ -n "$MIRROR" ] || MIRROR=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
      MIRROR=${MIRROR:-http://deb.debian.org/debian}
    fi
    step "making the base image $BASE_IMAGE: debootstrap bookworm from $MIRROR"
    root=$(mktemp -d /var/tmp/crm-rootfs.XXXXXX)
    debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
    tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
    rm -rf "$root"
  fi
fi

# The CA bundle npm trusts here (a registry behind a TLS-inspecting proxy) is trusted by the build's npm too.
CA_ARGS=()
cafile=$(npm config get cafile 2>/dev/null || true)
if [ -n "$cafile" ] && [ "$cafile" != null ] && [ "$cafile" != undefined ] && [ -f "$cafile" ]; then
  CA_ARGS=(-v "$cafile:/run/npm-ca.crt:ro" --build-arg NPM_CONFIG_CAFILE=/run/npm-ca.crt)
fi

if [ "${SKIP_BUILD:-}" = 1 ]; then
  step "using the image $IMAGE as it is (SKIP_BUILD=1)"
else
  step "building $IMAGE on $BASE_IMAGE"
  podman build --format docker --network host "${ULIMITS[@]}" "${CA_ARGS[@]}" --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$IMAGE" . \
    > /tmp/crm-image-smoke-build.log 2>&1 || { tail -40 /tmp/crm-image-smoke-build.log >&2; fail "podman build (log: /tmp/crm-image-smoke-build.log)"; }
fi
podman image inspect "$IMAGE" --format 'user {{.Config.User}}; entrypoint {{.Config.Entrypoint}}; healthcheck {{.Config.Healthcheck.Test}}'

step "starting the model stand-in on this host"
llm_out=$(mktemp)
# One process (tsx's loader in the project's Node.js), so stopping it stops the stand-in.
IMAGE_SMOKE_REPLY='Hello from the stand-in model, through the image.' node_modules/.bin/node --import tsx \
  scripts/image-smoke-llm.ts > "$llm_out" &
llm_pid=$!
cleanup() {
  kill "$llm_pid" 2>/dev/null || true
  [ "${KEEP:-}" = 1 ] || podman rm -f "$NAME" >/dev/null 2>&1 || true
  rm -f "$llm_out" "$llm_out.run"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q LLM_BASE_URL= "$llm_out" && break; sleep 0.2; done
LLM_BASE_URL=$(sed -n 's/^LLM_BASE_URL=//p' "$llm_out")
[ -n "$LLM_BASE_URL" ] || fail "the model stand-in did not start"
echo "stand-in: $LLM_BASE_URL"

step "starting the service in a container (host network, embedded database)"
podman run -d --name "$NAME" --network host "${ULIMITS[@]}" \
  -e PORT="$PORT" -e HOST=127.0.0.1 -e APP_URL="$B" -e BREACH_CHECK_URL=off \
  -e ADMIN_EMAIL=admin@example.com -e ADMIN_PASSWORD='change-me-now-42' \
  -e LLM_PROVIDER=anthropic -e LLM_BASE_URL="$LLM_BASE_URL" \
  "$IMAGE" >/dev/null 2>"$llm_out.run" || { cat "$llm_out.run" >&2; fail "podman run"; }
# (Without systemd, podman says it cannot schedule the health check; `podman healthcheck run` below runs it.)

step "waiting for /readyz"
ready=""
for _ in $(seq 1 180); do
  if curl -fsS "$B/readyz" >/dev/null 2>&1; then ready=1; break; fi
  [ "$(podman inspect -f '{{.State.Running}}' "$NAME")" = true ] || fail "the container stopped"
  sleep 1
done
[ -n "$ready" ] || fail "/readyz did not answer 200 within 180 s"
curl -sS "$B/readyz"; echo
podman healthcheck run "$NAME" >/dev/null && echo "HEALTHCHECK: healthy" || fail "the image's HEALTHCHECK failed"

step "inside the container"
uid=$(podman exec "$NAME" id -u)
[ "$uid" != 0 ] || fail "the service runs as root"
pid1=$(podman exec "$NAME" cat /proc/1/comm)
[ "$pid1" = tini ] || fail "PID 1 is $pid1, not tini"
podman exec "$NAME" sh -c 'command -v ffmpeg bwrap git' >/dev/null || fail "ffmpeg, bwrap or git is missing"
echo "uid $uid; PID 1 $pid1; $(podman exec "$NAME" node --version); $(podman exec "$NAME" sh -c 'ffmpeg -version | head -1'); $(podman exec "$NAME" bwrap --version); $(podman exec "$NAME" git --version)"
! podman exec "$NAME" sh -c 'test -w /app/server' || fail "the service can write its own code"

j() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v?.[k];console.log(typeof v==="object"?JSON.stringify(v):v)})' "$1"; }
post() { curl -sS "$B$1" -H 'content-type: application/json' ${3:+-H "authorization: Bearer $3"} -d "$2"; }

step "register → chat"
ADMIN=$(post /api/auth/login '{"email":"admin@example.com","password":"change-me-now-42"}' | j token)
[ -n "$ADMIN" ] && [ "$ADMIN" != undefined ] || fail "the admin could not log in"
CODE=$(post /api/crm/admin/invites '{"count":1,"note":"image smoke"}' "$ADMIN" | j codes.0)
echo "invite: $CODE"
post /api/auth/register "{\"email\":\"ann@example.com\",\"password\":\"a long passphrase\",\"invite_code\":\"$CODE\",\"name\":\"Ann\"}" | j needs_verification
VTOKEN=$(curl -sS "$B/api/crm/admin/outbox?limit=1" -H "authorization: Bearer $ADMIN" | j items.0.text | grep -o 'token=[A-Za-z0-9_-]*' | head -1 | cut -d= -f2)
post /api/auth/verify-email "{\"token\":\"$VTOKEN\"}" >/dev/null
T=$(post /api/auth/login '{"email":"ann@example.com","password":"a long passphrase"}' | j token)
[ -n "$T" ] && [ "$T" != undefined ] || fail "the new user could not log in"
curl -sS -X PUT "$B/api/crm/account/settings" -H "authorization: Bearer $T" -H 'content-type: application/json' \
  -d '{"llm_key":"sk-ant-example-0123456789abcdef"}' >/dev/null
post /api/crm/projects/create '{"displayName":"Market study","projectName":"market-study","niche":"market research","teamPreset":"research"}' "$T" | j project.worker_count
W=$(curl -sS "$B/api/crm/projects/market-study/workers" -H "authorization: Bearer $T" | j workers.0.id)
chat=$(curl -sSN --max-time 60 "$B/api/crm/projects/market-study/chat" -H "authorization: Bearer $T" \
  -H 'content-type: application/json' -d "{\"worker_id\":$W,\"text\":\"Plan the survey, please.\"}")
echo "$chat" | grep -E '^event:' | sort | uniq -c
echo "$chat" | grep -q '^event: text_delta' || { echo "$chat" | tail -20 >&2; fail "the chat streamed no text"; }
echo "$chat" | grep -q '^event: done' || fail "the chat stream did not end with done"
history=$(curl -sS "$B/api/crm/projects/market-study/chat/history?worker_id=$W&limit=20" -H "authorization: Bearer $T")
echo "$history" | grep -q 'through the image' || fail "the reply is not in the chat history"
echo "chat reply: $(echo "$history" | grep -o 'Hello from the stand-in model, through the image.' | head -1)"

step "image smoke passed"
