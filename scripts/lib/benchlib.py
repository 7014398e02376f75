"""What the Python scripts share, the benchmarks above all: where the repository is, the
Swift toolchain on PATH, release builds in the benchmarks' own scratch path, messages,
nearest-rank percentiles and the machine a figure was measured on. Each script adds this
folder to sys.path (netnsrun.py: workstations in network namespaces; unixhttp.py: the
control API)."""

import os
import platform
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Release builds for benchmarks, apart from the tests' debug build in .build.
SCRATCH = ".build-bench"
# Built as the package and scripts/install build it (the Swift runtime linked in): the
# benchmarks measure what a user runs. A dynamic runtime starts handoffctl 4 ms slower.
SHIPPED = ("--static-swift-stdlib",)


def log(msg=""):
    """A line of results, on stdout, at once."""
    print(msg, flush=True)


def notifier(name):
    """A function that prints `name: msg` on stderr: progress, not results."""
    def note(msg):
        print(f"{name}: {msg}", file=sys.stderr, flush=True)
    return note


def swift_env():
    """The environment with the Swift toolchain on PATH when it is not there yet
    (as scripts/swift-env does for the shell scripts)."""
    env = dict(os.environ)
    if shutil.which("swift") is None:
        for d in ("/opt/swift/usr/bin", "/usr/share/swift/usr/bin"):
            if os.access(os.path.join(d, "swift"), os.X_OK):
                env["PATH"] = d + os.pathsep + env.get("PATH", "")
                break
    return env


# What the package installs, built by name: a scratch path that once held a dynamic build
# also relinks GRDB's dynamic library, which fails with the static runtime.
# handoff-browser-host is handoff-session by that name (a link, as the package makes it).
EXECUTABLES = ("handoffd", "handoffctl", "handoff-history", "handoff-session")


def link_programs(directory):
    """handoff-browser-host, a link to handoff-session in `directory` (scripts/swift-env's
    link_programs)."""
    path = os.path.join(directory, "handoff-browser-host")
    if os.path.islink(path) or os.path.exists(path):
        os.remove(path)
    os.symlink("handoff-session", path)


def build(note, scratch=SCRATCH, extra=SHIPPED, products=EXECUTABLES):
    """A release build in `scratch` of each of `products` in turn, with the programs' links."""
    for product in products:
        cmd = ["swift", "build", "-c", "release", "--scratch-path", scratch, *extra, "--product", product]
        note("building: " + " ".join(cmd))
        subprocess.run(cmd, cwd=REPO, env=swift_env(), check=True)
    out = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch, *extra, "--show-bin-path"],
                         cwd=REPO, env=swift_env(), check=True, capture_output=True, text=True)
    link_programs(out.stdout.strip().splitlines()[-1])


def bin_dir(scratch=SCRATCH, extra=SHIPPED):
    """Where the release binaries are: BENCH_BIN_DIR when set (an A/B run against binaries
    built elsewhere, e.g. from another commit), else `scratch`'s release folder."""
    if os.environ.get("BENCH_BIN_DIR"):
        return os.environ["BENCH_BIN_DIR"]
    out = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch, *extra, "--show-bin-path"],
                         cwd=REPO, env=swift_env(), check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def percentile(sorted_values, p):
    """Nearest-rank percentile (p in 0..100) of an ascending list: a value that occurred."""
    if not sorted_values:
        return float("nan")
    k = max(1, -(-len(sorted_values) * p // 100))  # ceil(n * p / 100), at least 1
    return sorted_values[int(k) - 1]


def machine(**versions):
    """The machine of a run, for its results: CPUs, kernel, Swift, `versions` (what else
    the run used, e.g. avahi="avahi-daemon 0.8"), then the load average."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        swift = subprocess.run(["swift", "--version"], env=swift_env(), capture_output=True,
                               text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        swift = "unknown"
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(), "swift": swift, **versions,
            "loadavg": load}


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackPair:
    """Two fresh private handoffds, a and b, on 127.0.0.1 (--no-discovery, fixed peer ports,
    each trusting the other at its address): two workstations with nothing on any network.
    `extra`: more handoffd arguments for both. Use as a context manager (`loopback_pair`)."""

    def __init__(self, bindir, root, extra=()):
        self.bindir, self.root, self.ctl = bindir, root, os.path.join(bindir, "handoffctl")
        self.hosts = {}
        self.marks = {}
        for name in ("a", "b"):
            base = os.path.join(root, name)
            os.makedirs(base)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "HANDOFF_SOCKET", "HANDOFF_KEEP_STARTUP_CODE")}
            env.update(XDG_RUNTIME_DIR=base + "/run", XDG_STATE_HOME=base + "/state", XDG_CONFIG_HOME=base + "/config")
            for d in ("run", "state", "config"):
                os.makedirs(os.path.join(base, d), mode=0o700)
            port = free_port()
            log_file = open(base + "/handoffd.log", "w")
            daemon = subprocess.Popen([os.path.join(bindir, "handoffd"), "--name", "ws-" + name, "--no-discovery",
                                       "--peer-listen", "127.0.0.1", "--peer-port", str(port), *extra],
                                      env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
            self.hosts[name] = {"daemon": daemon, "env": env, "log": log_file, "port": port,
                                "sock": base + "/run/handoff/handoffd.sock", "logpath": base + "/handoffd.log"}

    def start(self):
        import time
        deadline = time.monotonic() + 15
        while not all(os.path.exists(h["sock"]) for h in self.hosts.values()):
            if time.monotonic() > deadline:
                raise RuntimeError("the daemons did not start")
            time.sleep(0.02)
        ids = {n: self.run(n, "id").stdout.strip() for n in self.hosts}
        self.run("a", "trust", ids["b"], "--address", f"127.0.0.1:{self.hosts['b']['port']}")
        self.run("b", "trust", ids["a"], "--address", f"127.0.0.1:{self.hosts['a']['port']}")
        return self

    def run(self, host, *argv, check=True, stdin=subprocess.DEVNULL):
        """handoffctl ARGV on `host`, its output captured as text."""
        h = self.hosts[host]
        return subprocess.run([self.ctl, *argv, "--socket", h["sock"]], env=h["env"], check=check,
                              stdin=stdin, capture_output=True, text=True)

    def sock(self, host):
        return self.hosts[host]["sock"]

    def env(self, host):
        return self.hosts[host]["env"]

    def pid(self, host):
        return self.hosts[host]["daemon"].pid

    def log(self, host):
        """What `host`'s handoffd logged since `reset_logs`."""
        with open(self.hosts[host]["logpath"], errors="replace") as f:
            f.seek(self.marks.get(host, 0))
            return f.read()

    def reset_logs(self):
        for name, h in self.hosts.items():
            self.marks[name] = os.path.getsize(h["logpath"])

    def stop(self):
        import signal
        for h in self.hosts.values():
            h["daemon"].send_signal(signal.SIGTERM)
        for h in self.hosts.values():
            try:
                h["daemon"].wait(timeout=10)
            except subprocess.TimeoutExpired:
                h["daemon"].kill()
                h["daemon"].wait()
            h["log"].close()


class loopback_pair:
    """`with loopback_pair(bindir, root, extra) as pair:` a started `LoopbackPair`, stopped after."""

    def __init__(self, bindir, root, extra=()):
        self.pair = LoopbackPair(bindir, root, extra)

    def __enter__(self):
        try:
            return self.pair.start()
        except BaseException:
            self.pair.stop()
            raise

    def __exit__(self, *exc):
        self.pair.stop()
        return False
