"""Workstations for the benchmarks: a run of network namespaces (scripts/netns), each
with its own D-Bus, avahi-daemon and handoffd, and the helpers to drive them. Every
process started is stopped by its PID and the run taken down by `down`."""

import json
import os
import shlex
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from benchlib import REPO, log

NETNS = os.path.join(REPO, "scripts", "netns")


class Run:
    def __init__(self, handoffd, handoffctl, debug_log, hosts=("a", "b"), prefix="bp"):
        self.hosts = tuple(hosts)
        self.name = prefix + "".join(random.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
        self.handoffd, self.handoffctl, self.debug_log = handoffd, handoffctl, debug_log
        self.dir = tempfile.mkdtemp(prefix="hbp-")
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

    def exec(self, host, argv, env=None, check=True):
        return self.netns("exec", self.name, host, "--", *argv, env=env, check=check)

    def spawn(self, host, log_path, argv, env=None):
        pid = int(self.netns("spawn", self.name, host, log_path, "--", *argv, env=env).stdout.strip())
        self.pids.append(pid)
        return pid

    def up(self):
        self.is_up = True  # `down` is safe after a failed `up`
        self.netns("up", self.name, *self.hosts)

    def socket(self, host):
        return os.path.join(self.dir, host, "run", "handoff", "handoffd.sock")

    def log_path(self, host):
        return os.path.join(self.dir, host + ".log")

    def ctl_env(self, host):
        return dict(os.environ, HANDOFF_SOCKET=self.socket(host))

    def ctl(self, host, *args, check=True):
        return self.exec(host, [self.handoffctl, *args], env=self.ctl_env(host), check=check)

    def start_daemon(self, host):
        base = os.path.join(self.dir, host)
        for d in ("run", "state", "config"):
            os.makedirs(os.path.join(base, d), mode=0o700, exist_ok=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "HANDOFF_SOCKET")}
        env.update(XDG_RUNTIME_DIR=base + "/run", XDG_STATE_HOME=base + "/state", XDG_CONFIG_HOME=base + "/config")
        argv = [self.handoffd, "--name", f"ws-{host}"] + (["--log-level", "debug"] if self.debug_log else [])
        # Settings for an experiment (`--history-days 0`: what the history costs a figure).
        argv += shlex.split(os.environ.get("BENCH_HANDOFFD_ARGS", ""))
        self.daemons[host] = self.spawn(host, self.log_path(host), argv, env=env)

    def wait_until(self, what, condition, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.1)
        raise RuntimeError(f"timed out waiting for {what}")

    def device_id(self, host):
        return self.ctl(host, "id").stdout.strip()

    def connected(self, host, peer_id):
        r = self.ctl(host, "peers", "--json", check=False)
        try:
            peers = json.loads(r.stdout)["peers"]
        except (ValueError, KeyError):
            return False
        return any(p.get("id") == peer_id and p.get("connected") for p in peers)

    def logs(self):
        out = []
        for host in sorted(self.daemons):
            try:
                with open(self.log_path(host), errors="replace") as f:
                    out.append(f"[{host}]\n" + "".join(f.readlines()[-40:]))
            except OSError:
                pass
        return "\n".join(out)

    def down(self, keep_logs=False):
        for pid in reversed(self.pids):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for pid in reversed(self.pids):
            if self.netns("wait", self.name, str(pid), "5", check=False).returncode == 255:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.pids = []
        if self.is_up:
            self.netns("down", self.name, check=False)
            self.is_up = False
        if keep_logs:
            log(f"logs kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


# A minimal HTTP/1.1 client on a Unix socket (no http.client: nothing between the
# socket and the timestamps but a recv loop)

class UnixHTTP:
    def __init__(self, path, timeout=15.0):
        self.path = path
        self.timeout = timeout
        self.sock = None
        self.buf = b""

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)
        self.buf = b""

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("handoffd closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def send(self, method, path, body=None, close=False):
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(data)}\r\n"
                + ("Connection: close\r\n" if close else "") + "\r\n").encode()
        self.sock.sendall(head + data)

    def head(self):
        status = int(self._line().split(b" ", 2)[1])
        headers = {}
        while True:
            line = self._line()
            if not line:
                return status, headers
            k, _, v = line.partition(b":")
            headers[k.strip().lower().decode()] = v.strip().decode()

    def response(self):
        status, headers = self.head()
        body = self._exactly(int(headers.get("content-length", "0")))
        return status, json.loads(body) if body else None

    def request(self, method, path, body=None, close=False):
        self.send(method, path, body, close)
        return self.response()

    def chunks(self):
        """The body of a chunked response, chunk by chunk, as it arrives."""
        while True:
            size = int(self._line().split(b";")[0], 16)
            if size == 0:
                return
            data = self._exactly(size)
            self._exactly(2)
            yield data
