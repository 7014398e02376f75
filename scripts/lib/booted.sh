# Sourced by scripts/booted/test-package, scripts/booted/test-gnome and scripts/bench/bench-package: Debian
# systems (12 unless BOOTED_SUITE says otherwise) booted with systemd as PID 1
# (systemd-nspawn --boot), each in a network namespace of its own made by `scripts/netns up
# --bare`, on one bridge. Their avahi-daemons multicast on that bridge only, never on this
# machine's interfaces. Needs root, systemd-container and mmdebstrap.
#
#   BOOTED_SUITE              Debian's suite: bookworm (12, the default) or trixie (13)
#   BOOTED_EXTRA_PACKAGES     more packages in the tree, comma-separated (a desktop, say)
#   booted_rootfs             the cached tree (made once, ~40 s for the base; BOOTED_ROOTFS)
#   booted_fetch_deps DEB|PACKAGE...
#                             download into that tree's apt cache what the .debs (and the
#                             packages named) need, so that `apt install ./DEB` inside
#                             resolves them offline as on a user's machine, while the
#                             systems have no route out
#   booted_up RUN HOST...     boot one system per HOST (writes go to a tmpfs overlay, the
#                             cached tree stays clean); /debs inside is BOOTED_DEBS
#   booted_root HOST CMD...   run CMD as root in HOST
#   booted_user HOST CMD...   run CMD as the user `tu` (uid 1000) with its user manager's
#                             environment (XDG_RUNTIME_DIR, the session bus)
#   booted_down               halt every system and remove the run's namespaces
#
# Recipe of the cached tree; a change of it makes a new one.
BOOTED_SUITE=${BOOTED_SUITE:-bookworm}
BOOTED_EXTRA_PACKAGES=${BOOTED_EXTRA_PACKAGES:-}
BOOTED_PACKAGES=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,curl${BOOTED_EXTRA_PACKAGES:+,$BOOTED_EXTRA_PACKAGES}
BOOTED_MIRROR=http://deb.debian.org/debian
BOOTED_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# A tree per suite and package set: the base one stays cached beside a desktop's.
BOOTED_ROOTFS=${BOOTED_ROOTFS:-$BOOTED_REPO/.build-systemd/$BOOTED_SUITE${BOOTED_EXTRA_PACKAGES:+-$(echo "$BOOTED_EXTRA_PACKAGES" | md5sum | cut -c1-8)}}
BOOTED_DEBS=${BOOTED_DEBS:-}
BOOTED_EXTRA_BINDS=()  # more --bind-ro=SRC:DST for systemd-nspawn
# BOOTED_ON_DISK=1: each system boots from a copy of the tree on disk instead of a tmpfs
# overlay. What is installed then lives on disk as on a real machine: a program on tmpfs
# is shmem, whose pages the kernel cannot page out without swap, which changes RSS.
BOOTED_ON_DISK=${BOOTED_ON_DISK:-0}
declare -A BOOTED_NSPAWN=() BOOTED_PID1=()
BOOTED_RUN=

booted_log() { echo "[$(date +%T)] $*" >&2; }
booted_die() { echo "booted: $*" >&2; exit 1; }

booted_rootfs() {
    local recipe="$BOOTED_SUITE $BOOTED_MIRROR $BOOTED_PACKAGES"
    if [ -f "$BOOTED_ROOTFS.recipe" ] && [ "$(cat "$BOOTED_ROOTFS.recipe")" = "$recipe" ] && [ -x "$BOOTED_ROOTFS/lib/systemd/systemd" ]; then
        return 0
    fi
    booted_log "making a Debian $BOOTED_SUITE tree in $BOOTED_ROOTFS (mmdebstrap: $BOOTED_PACKAGES)"
    rm -rf "$BOOTED_ROOTFS" "$BOOTED_ROOTFS.recipe"
    mkdir -p "$(dirname "$BOOTED_ROOTFS")"
    # The package lists stay, so apt inside resolves dependencies without a network. No
    # /etc/hostname: each system keeps the name systemd-nspawn gives it.
    mmdebstrap --quiet --variant=minbase --include="$BOOTED_PACKAGES" --skip=cleanup/apt/lists \
        --customize-hook='rm -f "$1/etc/hostname"' \
        "$BOOTED_SUITE" "$BOOTED_ROOTFS" "$BOOTED_MIRROR" >&2 \
        || booted_die "mmdebstrap failed (it needs $BOOTED_MIRROR)"
    echo "$recipe" >"$BOOTED_ROOTFS.recipe"
}

booted_fetch_deps() {
    local deb tmp inside=()
    tmp=$(mktemp -d "$BOOTED_ROOTFS/tmp/debs.XXXXXX")
    for deb in "$@"; do
        if [[ $deb == *.deb ]]; then
            cp "$deb" "$tmp/"
            inside+=("${tmp#"$BOOTED_ROOTFS"}/$(basename "$deb")")
        else
            inside+=("$deb")  # a package name
        fi
    done
    # In a chroot with this machine's network: apt only downloads (no daemon starts).
    chroot "$BOOTED_ROOTFS" apt-get install --download-only -y -qq "${inside[@]}" >/dev/null 2>"$tmp.log" \
        || { cat "$tmp.log" >&2; rm -rf "$tmp" "$tmp.log"; booted_die "apt-get could not download what the package needs"; }
    rm -rf "$tmp" "$tmp.log"
}

booted_up() {
    local run=$1 h pid i
    shift
    BOOTED_RUN=$run
    # What a killed earlier run of the same name left (its systems die with its namespaces).
    "$BOOTED_REPO/scripts/netns" down "$run"
    "$BOOTED_REPO/scripts/netns" up --bare "$run" "$@"
    for h in "$@"; do
        local root=$BOOTED_ROOTFS volatile=--volatile=overlay
        if [ "$BOOTED_ON_DISK" = 1 ]; then
            root=$BOOTED_ROOTFS.$run-$h
            rm -rf "$root"
            cp -a "$BOOTED_ROOTFS" "$root"
            volatile=--volatile=no
        fi
        local args=(-D "$root" "$volatile" --boot --console=passive --register=no --keep-unit
                    --machine="ws-$h" --network-namespace-path="/run/netns/hnd-$run-$h")
        [ -z "$BOOTED_DEBS" ] || args+=(--bind-ro="$BOOTED_DEBS:/debs")
        for b in "${BOOTED_EXTRA_BINDS[@]}"; do args+=(--bind-ro="$b"); done
        # Each system in a cgroup of its own in every hierarchy: systemd-nspawn --keep-unit
        # puts its payload under the cgroup it runs in, and two systems sharing one fight
        # over the same units' cgroups (this machine's PID 1 is not systemd, so nothing
        # else gives each its own).
        booted_cgroup_enter "hnd-$run-$h" systemd-nspawn "${args[@]}" >"$BOOTED_LOGS/nspawn-$h.log" 2>&1 &
        BOOTED_NSPAWN[$h]=$!
    done
    for h in "$@"; do
        pid=
        for ((i = 0; i < 200; i++)); do
            pid=$(ps --ppid "${BOOTED_NSPAWN[$h]}" -o pid= 2>/dev/null | head -1 | tr -d ' ' || true)
            [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ] && break
            kill -0 "${BOOTED_NSPAWN[$h]}" 2>/dev/null || { cat "$BOOTED_LOGS/nspawn-$h.log" >&2; booted_die "systemd-nspawn for $h exited"; }
            sleep 0.05
        done
        [ -n "$pid" ] || { cat "$BOOTED_LOGS/nspawn-$h.log" >&2; booted_die "no systemd in $h"; }
        BOOTED_PID1[$h]=$pid
    done
    for h in "$@"; do
        local state=
        # Until PID 1 has made /run/systemd/system and listens, systemctl says "offline" or
        # cannot connect; then --wait waits for the boot to end.
        for ((i = 0; i < 600; i++)); do
            state=$(timeout 90 nsenter -t "${BOOTED_PID1[$h]}" -a systemctl is-system-running --wait 2>&1) || true
            # (Debian 13's systemctl says "Failed to connect to system scope bus".)
            [[ $state == *offline* || $state == *"Failed to connect to"* || $state == *"not been booted"* ]] || break
            sleep 0.05
        done
        if [ "$state" != running ]; then
            booted_root "$h" systemctl --failed --no-pager >&2 || true
            booted_die "$h booted to '$state', not 'running'"
        fi
    done
}

# booted_cgroup_enter NAME CMD...: run CMD in a new cgroup NAME below the current one, in
# every mounted hierarchy (cgroup v1 controllers, name=systemd, and v2).
booted_cgroup_enter() {
    local name=$1 line path mnt
    shift
    booted_cgroup_remove "$name"  # what a killed earlier run left
    while IFS= read -r line; do
        local ctrl=${line#*:}
        path=${ctrl#*:}
        ctrl=${ctrl%%:*}
        case $ctrl in
            "") mnt=$(findmnt -n -o TARGET -t cgroup2 | head -1) ;;
            name=*) mnt=/sys/fs/cgroup/${ctrl#name=} ;;
            *) mnt=/sys/fs/cgroup/${ctrl%%,*} ;;
        esac
        [ -n "$mnt" ] && [ -d "$mnt$path" ] || continue
        mkdir -p "$mnt$path/$name"
        if [ -f "$mnt$path/$name/cpuset.cpus" ]; then  # v1 cpuset: empty until copied
            cat "$mnt$path/cpuset.cpus" >"$mnt$path/$name/cpuset.cpus"
            cat "$mnt$path/cpuset.mems" >"$mnt$path/$name/cpuset.mems"
        fi
        echo "$BASHPID" >"$mnt$path/$name/cgroup.procs"
    done </proc/self/cgroup
    exec "$@"
}

# booted_cgroup_remove NAME: remove what booted_cgroup_enter made (once its processes are gone).
booted_cgroup_remove() {
    local name=$1 d
    for d in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
        find "$d" -maxdepth 4 -type d -name "$name" 2>/dev/null | while read -r c; do
            find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
        done
    done
}

booted_root() {
    local h=$1
    shift
    nsenter -t "${BOOTED_PID1[$h]}" -a "$@"
}

booted_user() {
    local h=$1
    shift
    nsenter -t "${BOOTED_PID1[$h]}" -a runuser -u tu -- \
        env -C /home/tu HOME=/home/tu XDG_RUNTIME_DIR=/run/user/1000 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus "$@"
}

booted_down() {
    local h i
    for h in "${!BOOTED_NSPAWN[@]}"; do kill -TERM "${BOOTED_NSPAWN[$h]}" 2>/dev/null || true; done
    for h in "${!BOOTED_NSPAWN[@]}"; do
        for ((i = 0; i < 300; i++)); do kill -0 "${BOOTED_NSPAWN[$h]}" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "${BOOTED_NSPAWN[$h]}" 2>/dev/null || true
        wait "${BOOTED_NSPAWN[$h]}" 2>/dev/null || true
    done
    for h in "${!BOOTED_NSPAWN[@]}"; do
        booted_cgroup_remove "hnd-$BOOTED_RUN-$h"
        [ "$BOOTED_ON_DISK" != 1 ] || rm -rf "$BOOTED_ROOTFS.$BOOTED_RUN-$h"
    done
    BOOTED_NSPAWN=()
    [ -z "$BOOTED_RUN" ] || "$BOOTED_REPO/scripts/netns" down "$BOOTED_RUN"
    BOOTED_RUN=
}
