"""What the Python benchmark scripts share (scripts/bench-*, scripts/soak): where the
repository is, the Swift toolchain on PATH, release builds in the benchmarks' own scratch
path, messages, and nearest-rank percentiles. Each script adds this folder to sys.path."""

import os
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
EXECUTABLES = ("handoffd", "handoffctl", "handoff-history", "handoff-session", "handoff-browser-host")


def build(note, scratch=SCRATCH, extra=SHIPPED, products=EXECUTABLES):
    """A release build in `scratch` of each of `products` in turn."""
    for product in products:
        cmd = ["swift", "build", "-c", "release", "--scratch-path", scratch, *extra, "--product", product]
        note("building: " + " ".join(cmd))
        subprocess.run(cmd, cwd=REPO, env=swift_env(), check=True)


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
