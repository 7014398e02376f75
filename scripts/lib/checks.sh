# Sourced after scripts/lib/booted.sh by the scripts that check booted systems
# (scripts/booted/test-package, scripts/booted/test-gnome): steps, checks that fail with the systems'
# journals, and pairing two systems by code. The sourcing script sets `keep` (1: leave the
# systems running at the end, for --keep) and calls `finish` at its end.

step() { echo "[$(date +%T)] $*"; }
ok() { echo "  ok: $*"; }
fail() {
    echo "  FAILED: $*" >&2
    for h in "${!BOOTED_PID1[@]}"; do
        echo "--- the journal of $h (last 60 lines) ---" >&2
        booted_root "$h" journalctl -b --no-pager -n 60 >&2 2>&1 || true
    done
    finish 1
}
finish() {
    if [ $keep -eq 1 ] && [ ${#BOOTED_PID1[@]} -gt 0 ]; then
        for h in "${!BOOTED_PID1[@]}"; do echo "kept $h: nsenter -t ${BOOTED_PID1[$h]} -a bash"; done
        echo "stop them with: kill ${BOOTED_NSPAWN[*]}; scripts/netns down $BOOTED_RUN"
        trap - EXIT
        exit "$1"
    fi
    booted_down
    trap - EXIT
    exit "$1"
}
trap 'echo "$(basename "$0"): stopped at line $LINENO" >&2; finish 1' ERR
trap 'finish 1' INT TERM
trap 'booted_down' EXIT

# expect DESCRIPTION COMMAND...: the command must succeed.
expect() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$what"; else echo "$out" | tail -20 >&2; fail "$what"; fi
}
# eventually SECONDS DESCRIPTION COMMAND...: retried until it succeeds.
eventually() {
    local limit=$1 what=$2 end out
    shift 2
    end=$((SECONDS + limit))
    while ! out=$("$@" 2>&1); do
        [ $SECONDS -lt $end ] || { echo "$out" | tail -20 >&2; fail "$what (waited ${limit} s)"; }
        sleep 0.2
    done
    ok "$what"
}
contains() { grep -q -- "$1" <<<"$2"; }
user() { booted_user "$@"; }
root() { booted_root "$@"; }
# root_has HOST PATTERN COMMAND...: the command, run as root on HOST, succeeds and prints PATTERN (an ERE).
root_has() {
    local h=$1 pattern=$2 out
    shift 2
    out=$(booted_root "$h" "$@" 2>&1) || { echo "$out"; return 1; }
    grep -qE -- "$pattern" <<<"$out" || { echo "$out"; return 1; }
}
# user_has HOST PATTERN COMMAND...: the command, run as tu on HOST, succeeds and prints PATTERN.
user_has() {
    local h=$1 pattern=$2 out
    shift 2
    out=$(booted_user "$h" "$@" 2>&1) || { echo "$out"; return 1; }
    grep -q -- "$pattern" <<<"$out" || { echo "$out"; return 1; }
}

# booted_user_and_package DEB LOGDIR HOST...: on each HOST, the user tu logged in (lingering:
# the file logind reads and the user manager, as `loginctl enable-linger` leaves them; that
# call, entered by nsenter, fails with EUNATCH on Debian 13), then DEB installed with apt.
booted_user_and_package() {
    local deb=$1 logs=$2 h
    shift 2
    for h in "$@"; do
        root "$h" useradd -m -s /bin/bash tu
        root "$h" sh -c 'mkdir -p /var/lib/systemd/linger && touch /var/lib/systemd/linger/tu'
        root "$h" systemctl start user@1000.service
        eventually 20 "$h: tu's user manager runs" root "$h" systemctl is-active --quiet user@1000.service
        root "$h" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /debs/"$(basename "$deb")" >"$logs/apt-install-$h.log" 2>&1 \
            || { tail -30 "$logs/apt-install-$h.log" >&2; fail "$h: apt install ./$(basename "$deb")"; }
    done
    ok "installed on $*"
}

# users_journals_clean HOST...: nothing in tu's journal on each HOST that names handoff
# says error, warning or failed.
users_journals_clean() {
    local h journal errors
    for h in "$@"; do
        journal=$(user "$h" journalctl --user --no-pager)
        errors=$(grep -E "handoff" <<<"$journal" | grep -iE "error|warning|failed" || true)
        [ -z "$errors" ] || { echo "$errors" >&2; fail "$h: the user's journal has errors about handoff"; }
        ok "$h: nothing about handoff in the user's journal says error, warning or failed"
    done
}

# booted_pair A B LOGDIR: pairs A and B by code, over their avahi-daemons, as their user
# does (handoffctl pair on both, then the code each shows), and checks each trusts the other.
booted_pair() {
    local a=$1 b=$2 logs=$3 pair_a pair_b confirm_a code_a code_b id_a id_b
    user "$a" handoffctl pair >"$logs/pair-$a.log" 2>&1 &
    pair_a=$!
    user "$b" handoffctl pair >"$logs/pair-$b.log" 2>&1 &
    pair_b=$!
    eventually 60 "both show a code" bash -c "grep -q '^Code: ' '$logs/pair-$a.log' && grep -q '^Code: ' '$logs/pair-$b.log'"
    code_a=$(booted_code "$logs/pair-$a.log")
    code_b=$(booted_code "$logs/pair-$b.log")
    [ -n "$code_a" ] && [ "$code_a" = "$code_b" ] || fail "the codes differ or are unreadable: $a '$code_a', $b '$code_b'"
    ok "both show code $code_a"
    user "$a" handoffctl pair --code "$code_a" >"$logs/confirm-$a.log" 2>&1 &
    confirm_a=$!
    user "$b" handoffctl pair --code "$code_b" >"$logs/confirm-$b.log" 2>&1 || { cat "$logs/confirm-$b.log" >&2; fail "$b: pair --code"; }
    wait $confirm_a || { cat "$logs/confirm-$a.log" >&2; fail "$a: pair --code"; }
    wait $pair_a || true
    wait $pair_b || true
    id_a=$(user "$a" handoffctl id)
    id_b=$(user "$b" handoffctl id)
    expect "$a trusts $b" user_has "$a" "$id_b" handoffctl devices
    expect "$b trusts $a" user_has "$b" "$id_a" handoffctl devices
}
booted_code() { sed -n 's/^Code: \([0-9]\{3\}\) \{0,1\}\([0-9]\{3\}\).*/\1\2/p' "$1" | head -1; }
