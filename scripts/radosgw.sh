#!/usr/bin/env bash
# A throwaway S3 server for tests and local trials: Ceph's radosgw on
# loopback, with one monitor and one in-memory OSD (memstore: nothing is kept
# once it stops). radosgw verifies SigV4 signatures, as AWS S3 does.
#
#   scripts/radosgw.sh start   starts it (or finds it running) and prints its S3 settings
#   scripts/radosgw.sh env     prints the S3 settings of the running one; fails if it is not up
#   scripts/radosgw.sh stop    stops it and removes its folder
#
# The settings are printed on stdout as shell assignments, so that
#   eval "$(scripts/radosgw.sh start)"
# sets S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY and
# S3_FORCE_PATH_STYLE (and S3_BUCKET when RADOSGW_BUCKET names a bucket to make).
# Everything else goes to stderr.
#
# Environment (all optional):
#   RADOSGW_DIR            its folder (config, pid files, logs, the monitor's store);
#                          default ${TMPDIR:-/tmp}/audio-share-radosgw
#   RADOSGW_PORT           the S3 port on 127.0.0.1; default 7480
#   RADOSGW_MON_PORT       the monitor's port on 127.0.0.1; default 6789
#   RADOSGW_START_TIMEOUT  seconds to wait for it to answer; default 90
#   RADOSGW_MEMORY_BYTES   how much the in-memory OSD holds; default 2 GiB (deleted objects
#                          hold theirs until radosgw's garbage collection, a few minutes later)
#   RADOSGW_BUCKET         a bucket to create once it is up (tests make their own)
#   RADOSGW_OWNER          written to $RADOSGW_DIR/owner when this call starts it (not when it was
#                          running already), so that whoever started it can tell, and stop it
#
# Needs Debian's packages: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd
# It listens on 127.0.0.1 only, and the daemons trust each other without keys (auth none):
# it is for tests on one machine, never for data that matters.
set -euo pipefail

DIR="${RADOSGW_DIR:-${TMPDIR:-/tmp}/audio-share-radosgw}"
PORT="${RADOSGW_PORT:-7480}"
MON_PORT="${RADOSGW_MON_PORT:-6789}"
TIMEOUT="${RADOSGW_START_TIMEOUT:-90}"
MEMORY_BYTES="${RADOSGW_MEMORY_BYTES:-2147483648}"
ENDPOINT="http://127.0.0.1:${PORT}"
REGION=us-east-1
ACCESS_KEY=audio-share-test
SECRET_KEY=audio-share-test-secret-key-0123456789
export CEPH_CONF="$DIR/ceph.conf"

say() { echo "radosgw.sh: $*" >&2; }
fail() { say "$*"; exit 1; }

print_settings() {
  echo "S3_ENDPOINT=$ENDPOINT"
  echo "S3_REGION=$REGION"
  echo "S3_ACCESS_KEY_ID=$ACCESS_KEY"
  echo "S3_SECRET_ACCESS_KEY=$SECRET_KEY"
  echo "S3_FORCE_PATH_STYLE=true"
  if [ -n "${RADOSGW_BUCKET:-}" ]; then echo "S3_BUCKET=$RADOSGW_BUCKET"; fi
}

# Whether the process named by a pid file of ours is alive.
alive() { [ -f "$DIR/run/$1.pid" ] && kill -0 "$(cat "$DIR/run/$1.pid")" 2>/dev/null; }
answers() { curl -sf -m 2 -o /dev/null "$ENDPOINT/"; }
# radosgw answers before the user exists; a signed request tells the two apart.
# radosgw wants the payload's hash (here, of no payload) among the signed headers.
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
signed() { curl -s -m 10 --aws-sigv4 "aws:amz:$REGION:s3" -H "x-amz-content-sha256: $EMPTY_SHA256" --user "$ACCESS_KEY:$SECRET_KEY" "$@"; }
signed_get() { signed -f -o /dev/null "$ENDPOINT/"; }
running() { alive mon.a && alive osd.0 && alive client.rgw && signed_get; }

make_bucket() {
  [ -n "${RADOSGW_BUCKET:-}" ] || return 0
  # 200 when made, 409 BucketAlreadyExists/OwnedByYou when it is there already: both are fine.
  local status
  status=$(signed -o /dev/null -w '%{http_code}' -X PUT "$ENDPOINT/$RADOSGW_BUCKET")
  case "$status" in
    200 | 409) ;;
    *) fail "could not create the bucket $RADOSGW_BUCKET (HTTP $status)" ;;
  esac
}

# Runs one setup command, its output in the setup log; a failure names the command.
step() {
  echo "+ $*" >>"$DIR/log/setup.log"
  # 9>&-: the daemons must not inherit the lock's descriptor, or they would hold the lock as long as they run.
  "$@" 9>&- >>"$DIR/log/setup.log" 2>&1 || fail "$1 failed (exit $?) during the start: $*; see $DIR/log/setup.log"
}

# A ceph command, again until it works: a client sometimes asks a monitor just started before it
# knows the cluster's fsid, and is refused ("EPERM: problem getting command descriptions from
# mon"). Each command here is idempotent. Each try gets a deadline: without a monitor the CLI
# would wait forever.
ceph_cmd() {
  echo "+ ceph $*" >>"$DIR/log/setup.log"
  until timeout 30 ceph --connect-timeout 20 "$@" >>"$DIR/log/setup.log" 2>&1; do
    [ $((SECONDS - started)) -lt "$TIMEOUT" ] || fail "ceph $* kept failing for ${TIMEOUT} s; see $DIR/log/setup.log"
    sleep 0.2
  done
}

stop() {
  local name pid
  for name in client.rgw osd.0 mon.a; do
    if alive "$name"; then
      pid=$(cat "$DIR/run/$name.pid")
      kill "$pid" 2>/dev/null || true
      # Ceph daemons stop within a second or two; a deadline, then the hard way.
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$DIR"
}

start() {
  for tool in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph curl; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed. Install Ceph's S3 gateway with: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd"
  done
  if running; then
    say "already running at $ENDPOINT (folder $DIR)"
    make_bucket
    print_settings
    return
  fi
  # Half up (a daemon died, or a start was cut off): begin again from nothing.
  stop
  if answers; then fail "something else answers at $ENDPOINT; set RADOSGW_PORT to another port, or stop it"; fi

  local started=$SECONDS
  mkdir -p "$DIR"/{mon.a,osd.0,run,log}
  local fsid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  cat >"$CEPH_CONF" <<EOF
[global]
fsid = $fsid
mon host = [v1:127.0.0.1:$MON_PORT]
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd objectstore = memstore
memstore device bytes = $MEMORY_BYTES
osd crush chooseleaf type = 0
run dir = $DIR/run
log file = $DIR/log/\$name.log
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
ms bind ipv6 = false
public addr = 127.0.0.1
mon data = $DIR/mon.\$id
osd data = $DIR/osd.\$id
# The OSD is placed in the CRUSH map below, by hand. Left on, it sends these updates itself at
# start, sometimes before it knows the cluster's fsid, and the monitor refuses it ("wrong fsid").
osd crush update on start = false
osd class update on start = false
# Small pools: one OSD does not need the default 32 placement groups per pool.
osd pool default pg num = 8
osd pool default pgp num = 8
# Deleted objects free their memory within a few minutes, not hours (Ceph's defaults).
rgw gc obj min wait = 60
rgw gc processor period = 60
# One thread pool is plenty for tests, and a 2-core machine is shared.
rgw thread pool size = 64
EOF
  say "starting the monitor"
  # v1 (the legacy protocol) named outright: on a port other than 6789 Ceph would assume v2.
  step monmaptool --create --addv a "[v1:127.0.0.1:$MON_PORT]" --fsid "$fsid" "$DIR/monmap"
  step ceph-mon --mkfs -i a --monmap "$DIR/monmap"
  step timeout "$TIMEOUT" ceph-mon -i a
  say "starting the OSD (in memory)"
  # Every ceph command gets a deadline: without a monitor, the CLI would wait forever.
  # The OSD's uuid is chosen here and given to both, as Ceph's manual deployment does; left to
  # chance, the monitor sometimes holds another for osd.0 and refuses the OSD ("wrong fsid").
  local osd_uuid
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  ceph_cmd osd create "$osd_uuid" 0
  step ceph-osd -i 0 --mkfs --osd-uuid "$osd_uuid"
  ceph_cmd osd crush add-bucket localhost host
  ceph_cmd osd crush move localhost root=default
  ceph_cmd osd crush add osd.0 1.0 host=localhost
  step timeout "$TIMEOUT" ceph-osd -i 0
  say "starting the gateway on $ENDPOINT"
  # Each daemon forks into the background once it has its configuration; a deadline in case it never does.
  step timeout "$TIMEOUT" radosgw -n client.rgw --rgw-frontends "beast endpoint=127.0.0.1:$PORT"
  until answers; do
    if [ $((SECONDS - started)) -ge "$TIMEOUT" ]; then
      fail "radosgw did not answer at $ENDPOINT within ${TIMEOUT} s; see the logs in $DIR/log"
    fi
    alive client.rgw || fail "radosgw exited during its start; see $DIR/log/client.rgw.log"
    sleep 0.5
  done
  timeout 60 radosgw-admin user create --uid=audio-share-test --display-name="Audio Share tests" \
    --access-key="$ACCESS_KEY" --secret="$SECRET_KEY" >/dev/null 2>>"$DIR/log/setup.log" ||
    fail "could not create the S3 user; see $DIR/log/setup.log"
  until signed_get; do
    [ $((SECONDS - started)) -lt "$TIMEOUT" ] || fail "radosgw refused the test user's keys for ${TIMEOUT} s; see $DIR/log"
    sleep 0.2
  done
  if [ -n "${RADOSGW_OWNER:-}" ]; then echo "$RADOSGW_OWNER" >"$DIR/owner"; fi
  make_bucket
  say "up at $ENDPOINT in $((SECONDS - started)) s (folder $DIR; stop it with: scripts/radosgw.sh stop)"
  print_settings
}

# One start or stop at a time: test files running in parallel all ask for it at once.
lock() {
  mkdir -p "$(dirname "$DIR")"
  exec 9>"$DIR.lock"
  flock -w "$TIMEOUT" 9 || fail "another radosgw.sh has held $DIR.lock for ${TIMEOUT} s"
}

case "${1:-}" in
  start) lock; start ;;
  stop) lock; stop ;;
  env) running || fail "radosgw is not running at $ENDPOINT (folder $DIR); start it with: scripts/radosgw.sh start"; print_settings ;;
  *) fail "usage: scripts/radosgw.sh start|env|stop" ;;
esac
