# Shared by integration/up, integration/down and integration/test: paths, versions, helpers.
# Everything fetched or started lives under $STREAMFORM_INTEGRATION_HOME (default
# ~/.cache/streamform-integration), never in the repository's tracked files.

set -euo pipefail

INTEGRATION_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$INTEGRATION_DIR/versions.env"

HOME_DIR="${STREAMFORM_INTEGRATION_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/streamform-integration}"
ARTIFACTS="$HOME_DIR/artifacts"
FLINK_HOME="$ARTIFACTS/flink-$FLINK_VERSION"
KAFKA_HOME="$ARTIFACTS/kafka-$KAFKA_VERSION"
RUN="$HOME_DIR/run"
LOGS="$RUN/logs"

say() { printf '%s\n' "integration: $*" >&2; }
die() { say "error: $*"; exit 1; }

pid_file() { printf '%s/%s.pid' "$RUN" "$1"; }

# Whether the service's recorded process is alive.
running() {
  local f
  f="$(pid_file "$1")"
  [[ -f "$f" ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# Prints the last lines of a service's log.
tail_log() {
  local log="$LOGS/$1.log"
  if [[ -f "$log" ]]; then
    if grep -qE ' (ERROR|FATAL) ' "$log"; then
      say "errors in $log:"
      grep -E -A 2 ' (ERROR|FATAL) ' "$log" | head -n 20 >&2
    fi
    say "last lines of $log:"
    tail -n 20 "$log" >&2
  fi
  if [[ -f "$LOGS/$1.out" ]]; then
    tail -n 20 "$LOGS/$1.out" >&2
  fi
}

# wait_until NAME SECONDS COMMAND...: polls COMMAND once a second until it succeeds; on
# timeout, or when the service's process dies, prints the service's log and fails.
wait_until() {
  local name="$1" seconds="$2"
  shift 2
  local i
  for ((i = 0; i < seconds; i++)); do
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    if ! running "$name"; then
      tail_log "$name"
      die "$name exited while starting"
    fi
    sleep 1
  done
  tail_log "$name"
  die "$name did not answer within ${seconds}s"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

http_ok() { curl -sf --max-time 2 "$1"; }
