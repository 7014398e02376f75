"""Workstations for the benchmarks: a run of network namespaces (scripts/netns), each
with its own D-Bus, avahi-daemon and handoffd, and the helpers to drive them (`Run`, which
each script that needs more subclasses). Every process started is stopped by its PID and
the run taken down by `down`."""

import json
import os
import shlex
import random
import shutil
import signal
import subprocess
import tempfile
import time

from benchlib import REPO, log

NETNS = os.path.join(REPO, "scripts", "netns")


def gone(pid, timeout, step=0.02):
    """Wait until a process has exited (a zombie counts: after a Ctrl-C in a terminal the
    scripts/netns reaper that would reap it and record its status may be gone too)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


class Run:
    """A run of workstations (`hosts`) as network namespaces: `up` makes them, each
    handoffd keeps its folders in `home(host)` (in `dir`), every process `spawn` starts is
    stopped by its PID and the run is taken down by `down`. A benchmark subclasses it for
    what only it does (pinned CPUs, sshd, KDE Connect...). `say`: where `down` says that
    it kept the logs."""

    # How often `wait_until` looks again, in seconds.
    step = 0.1
    # The folders of each host's handoffd (XDG_RUNTIME_DIR, XDG_STATE_HOME, XDG_CONFIG_HOME).
    folders = ("run", "state", "config")

    def __init__(self, handoffd, handoffctl, debug_log=False, hosts=("a", "b"), prefix="bp", name=None,
                 tmp_prefix="hbp-", say=log):
        self.hosts = tuple(hosts)
        self.name = name or prefix + "".join(random.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
        self.handoffd, self.handoffctl, self.debug_log = handoffd, handoffctl, debug_log
        self.say = say
        self.dir = tempfile.mkdtemp(prefix=tmp_prefix)
        os.chmod(self.dir, 0o755)
        self.pids = []          # everything we spawned, stopped by PID at the end
        self.daemons = {}
        self.is_up = False

    # scripts/netns wrappers
    def netns(self, *args, env=None, check=True, capture=True):
        r = subprocess.run(["bash", NETNS, *args], env=env or os.environ, stdin=subprocess.DEVNULL,
                           capture_output=capture, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"scripts/netns {' '.join(args)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
        return r

    def command(self, host, argv):
        """What runs in `host` for `argv` (a subclass may wrap it: taskset)."""
        return list(argv)

    def exec(self, host, argv, env=None, check=True):
        return self.netns("exec", self.name, host, "--", *self.command(host, argv), env=env, check=check)

    def spawn(self, host, log_path, argv, env=None):
        pid = int(self.netns("spawn", self.name, host, log_path, "--", *self.command(host, argv), env=env).stdout.strip())
        self.pids.append(pid)
        return pid

    def stop(self, pid, timeout=5):
        """SIGTERM one spawned process, SIGKILL if it is still there after timeout seconds."""
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        if not self.exited(pid, timeout):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.exited(pid, 5)
        if pid in self.pids:
            self.pids.remove(pid)

    def up(self):
        self.is_up = True  # `down` is safe after a failed `up`
        self.netns("up", self.name, *self.hosts)

    def home(self, host):
        return os.path.join(self.dir, host)

    def socket(self, host):
        return os.path.join(self.home(host), "run", "handoff", "handoffd.sock")

    def log_path(self, host):
        return os.path.join(self.dir, host + ".log")

    def ctl_env(self, host):
        return dict(os.environ, HANDOFF_SOCKET=self.socket(host))

    def ctl(self, host, *args, check=True):
        return self.exec(host, [self.handoffctl, *args], env=self.ctl_env(host), check=check)

    def make_home(self, host):
        base = self.home(host)
        for d in self.folders:
            os.makedirs(os.path.join(base, d), mode=0o700, exist_ok=True)
        return base

    def daemon_env(self, host):
        """The environment of host's handoffd, its folders made."""
        base = self.make_home(host)
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "HANDOFF_SOCKET")}
        env.update(XDG_RUNTIME_DIR=base + "/run", XDG_STATE_HOME=base + "/state", XDG_CONFIG_HOME=base + "/config")
        return env

    def daemon_args(self):
        """handoffd's options after its name: debug logs if asked, and the settings of an
        experiment (BENCH_HANDOFFD_ARGS, e.g. `--history-days 0`: what the history costs a figure)."""
        return (["--log-level", "debug"] if self.debug_log else []) + shlex.split(os.environ.get("BENCH_HANDOFFD_ARGS", ""))

    def start_daemon(self, host):
        env = self.daemon_env(host)
        argv = [self.handoffd, "--name", f"ws-{host}", *self.daemon_args()]
        self.daemons[host] = self.spawn(host, self.log_path(host), argv, env=env)

    def wait_until(self, what, condition, timeout=30.0, step=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(step or self.step)
        raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")

    def device_id(self, host):
        return self.ctl(host, "id").stdout.strip()

    def connected(self, host, peer_id):
        r = self.ctl(host, "peers", "--json", check=False)
        try:
            peers = json.loads(r.stdout)["peers"]
        except (ValueError, KeyError):
            return False
        return any(p.get("id") == peer_id and p.get("connected") for p in peers)

    def logs(self, hosts=None, lines=40):
        """The last lines of each handoffd's log (of `hosts`, else of every one started)."""
        out = []
        for host in hosts or sorted(self.daemons):
            try:
                with open(self.log_path(host), errors="replace") as f:
                    out.append(f"[{host}]\n" + "".join(f.readlines()[-lines:]))
            except OSError:
                pass
        return "\n".join(out)

    def every_log(self, lines=40):
        """The last lines of every log in `dir`."""
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".log"):
                try:
                    with open(os.path.join(self.dir, name), errors="replace") as f:
                        out.append(f"[{name}]\n" + "".join(f.readlines()[-lines:]))
                except OSError:
                    pass
        return "\n".join(out)

    def exited(self, pid, timeout):
        """Whether a spawned process ended within timeout seconds (scripts/netns wait: its
        reaper recorded the exit; a subclass may look at /proc instead: `gone`)."""
        return self.netns("wait", self.name, str(pid), str(timeout), check=False).returncode != 255

    def stop_spawned(self):
        """SIGTERM everything spawned, newest first; SIGKILL what did not end in 5 s."""
        for pid in reversed(self.pids):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for pid in reversed(self.pids):
            if not self.exited(pid, 5):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.pids = []

    def tidy(self):
        """What a subclass removes after the run is down, logs kept or not."""

    def down(self, keep_logs=False):
        self.stop_spawned()
        if self.is_up:
            self.netns("down", self.name, check=False)
            self.is_up = False
        self.tidy()
        if keep_logs:
            self.say(f"logs kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
