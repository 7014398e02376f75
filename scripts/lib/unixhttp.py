"""handoffd's control API from the Python scripts: a minimal HTTP/1.1 client on a Unix
socket (no http.client: nothing between the socket and the timestamps but a recv loop)."""

import json
import socket
import time


class UnixHTTP:
    """One connection. `request` answers (status, JSON body or None); `send` and `head`
    for a response read by hand (an event stream: `chunks`)."""

    # The most one recv reads (a script that moves large bodies reads more at once).
    recv_size = 65536

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
        return self

    def close(self):
        """Shut down, then close: a thread blocked reading this connection (an event
        stream's) wakes up."""
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
            self.sock = None

    def _fill(self):
        """Reads what has arrived; returns when it arrived (time.monotonic_ns)."""
        chunk = self.sock.recv(self.recv_size)
        if not chunk:
            raise ConnectionError("handoffd closed the connection")
        self.buf += chunk
        return time.monotonic_ns()

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

    def send(self, method, path, body=None, close=False, headers=()):
        """A request, `body` as JSON; `close` asks the daemon to close after answering;
        `headers`: more (name, value) pairs."""
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(data)}\r\n"
                + ("Connection: close\r\n" if close else ""))
        for k, v in headers:
            head += f"{k}: {v}\r\n"
        self.sock.sendall((head + "\r\n").encode() + data)

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
