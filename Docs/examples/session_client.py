#!/usr/bin/env python3
"""A complete handoffd client using only the Python standard library.

It opens a session (the event stream), makes an activity current as that
session, marks it stale with needsSave, answers the daemon's will-save event by
refreshing the payload, and shows the fresh snapshot another device would get.
See Docs/LocalAPI.md.
"""
import http.client
import json
import os
import socket
import threading

SOCKET = os.environ.get("HANDOFF_SOCKET") or os.path.join(
    os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}", "handoff", "handoffd.sock")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over the daemon's Unix socket ("localhost" only fills the Host header)."""

    def __init__(self, timeout=None):
        super().__init__("localhost", timeout=timeout)

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(SOCKET)


def call(method, path, body=None):
    """One request; returns (HTTP status, decoded JSON body). Errors are {"error": {...}}."""
    conn = UnixHTTPConnection(timeout=15)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


# The app's own state: what the payload must describe when another device takes over.
note = {"noteID": 42, "cursor": 0}
activity_id = None
print_lock = threading.Lock()


def say(*parts):
    with print_lock:   # two threads print; keep their lines whole
        print(*parts, flush=True)


def on_event(event):
    kind = event["event"]
    if kind == "will-save" and event["activityID"] == activity_id:
        # Refresh now: replace userInfo with the current state. Any PATCH of the
        # activity answers the will-save and clears needsSave.
        status, _ = call("PATCH", f"/v1/activities/{activity_id}",
                         {"userInfoMode": "replace", "userInfo": note})
        say(f"  event will-save (saveID {event['saveID'][:8]}...) -> PATCH {status}")
    elif "activity" in event:
        a = event["activity"]
        say(f"  event {kind}: {a['title']!r} state={a['state']} userInfo={json.dumps(a['userInfo'])}"
            + (f" reason={event['reason']}" if "reason" in event else ""))
    # Events this client does not know are ignored, as every client must.


# 1. Open the event stream. Its first line carries the session token.
stream_conn = UnixHTTPConnection()
stream_conn.request("GET", "/v1/events")
stream = stream_conn.getresponse()
token = json.loads(stream.readline())["session"]
say("session", token)


def read_events():
    for line in iter(stream.readline, b""):   # one JSON object per line
        on_event(json.loads(line))


reader = threading.Thread(target=read_events, daemon=True)
reader.start()

# 2. Become current, owned by this session (the header Handoff-Session: <token> works too).
status, a = call("POST", "/v1/activities", {
    "activityType": "com.example.editor.edit-note",
    "title": "Shopping list",
    "userInfo": note,
    "requiredUserInfoKeys": ["noteID"],
    "session": token,
})
activity_id = a["id"]
say("become-current", status, a["id"], "owner", a["owner"], "payloadSize", a["payloadSize"])

# 3. The user types. Instead of sending every keystroke, mark the payload stale.
note["cursor"] = 17
status, a = call("PATCH", f"/v1/activities/{activity_id}", {"needsSave": True})
say("mark stale", status, "needsSave", a["needsSave"])

# 4. Another device asks for the activity: a snapshot. The daemon sends us
#    will-save, waits for our PATCH (at most 500 ms by default), then answers.
status, snap = call("POST", "/v1/activities/current/snapshot")
say("snapshot", status, "stale", snap["stale"], "userInfo", json.dumps(snap["userInfo"]),
    "needsSave", snap["needsSave"])

# 5. The app quits: closing the stream ends the session and invalidates what it owns.
stream_conn.sock.shutdown(socket.SHUT_RDWR)
reader.join(timeout=2)
stream_conn.close()
status, a = call("GET", f"/v1/activities/{activity_id}")
say("after the session ended:", status, "state", a["state"])
