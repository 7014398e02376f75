import Foundation
import HandoffTestSupport
import Testing

/// The browser extension's native-messaging host, driven by a process that speaks the
/// browsers' exact framing (32-bit native-endian length + JSON), against a real handoffd.
/// Root only (a namespace host keeps it apart from everything else).
extension WorkstationTests {
@Suite struct BrowserHostTests {
    static let driver = #"""
        import json, struct, subprocess, sys
        host = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        def send(obj=None, raw=None):
            body = raw if raw is not None else json.dumps(obj).encode()
            host.stdin.write(struct.pack("=I", len(body)) + body); host.stdin.flush()
        def receive():
            head = host.stdout.read(4)
            if len(head) < 4: return None
            return json.loads(host.stdout.read(struct.unpack("=I", head)[0]))
        def current():
            return subprocess.run([sys.argv[2], "current", "--json"], capture_output=True, text=True).stdout
        out = {}
        send({"type": "tab", "url": "https://news.example.org/story", "title": "Story", "incognito": False})
        out["ack1"] = receive(); out["current1"] = current()
        send({"type": "tab", "url": "https://news.example.org/story", "title": "Story (updated)", "incognito": False})
        out["ack2"] = receive(); out["current2"] = current()
        send({"type": "tab", "url": "https://secret.example/", "title": "Private", "incognito": True})
        out["ack3"] = receive(); out["current3"] = current()
        send({"type": "tab", "url": "https://other.example/", "title": "Other", "incognito": False})
        out["ack4"] = receive()
        send({"type": "nonsense"}); out["ack5"] = receive()
        # The browser closes: the host ends, and the activity with it (checked by the test
        # once handoffd has seen the host's session end).
        host.stdin.close(); out["exit"] = host.wait(10)
        # A broken frame: an error message, then the host exits non-zero.
        host = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        host.stdin.write(struct.pack("=I", 0xFFFFFFF0)); host.stdin.flush(); host.stdin.close()
        out["oversize"] = receive(); out["oversize_exit"] = host.wait(10)
        print(json.dumps(out))
        """#

    @Test func focusedTabBecomesTheActivityAndEndsWithTheBrowser() async throws {
        try await NetnsRun.with(["a"]) { net in
            try await net.startDaemon("a")
            let r = try await net.exec("a", ["env", "HANDOFF_SOCKET=\(net.socket("a"))", "HOME=\(net.directory)", "python3", "-c", Self.driver,
                                             try TestEnvironment.binary("handoff-browser-host"), try TestEnvironment.binary("handoffctl")])
            #expect(r.status == 0, "\(r)")
            guard let line = r.stdout.split(separator: "\n").last,
                  let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { throw TestFailure("driver: \(r)") }
            #expect((o["ack1"] as? [String: Any])?["offered"] as? Bool == true, "\(o)")
            #expect((o["current1"] as? String)?.contains("https://news.example.org/story") == true, "\(o)")
            #expect((o["current1"] as? String)?.contains("handoff.browsing-web") == true, "\(o)")
            #expect((o["current2"] as? String)?.contains("Story (updated)") == true, "the same page is updated, not replaced: \(o)")
            #expect((o["ack3"] as? [String: Any])?["offered"] as? Bool == false)
            #expect((o["current3"] as? String)?.contains("secret.example") == false, "a private window is never offered: \(o)")
            #expect((o["ack5"] as? [String: Any])?["type"] as? String == "error")
            #expect(o["exit"] as? Int == 0)
            // Both hosts have exited: once handoffd has seen their sessions end, the tab's
            // activity has ended with them (the same step of handoffd's registry).
            try await eventually(10, "handoffd to see the browser hosts' sessions end") {
                try await net.ctl("a", "status", "--json").stdout.contains("\"sessions\": 0")
            }
            let current6 = try await net.ctl("a", "current", "--json").stdout
            #expect(!current6.contains("other.example"), "the activity ends with the browser: \(current6)\n\(o)")
            #expect((o["oversize"] as? [String: Any])?["type"] as? String == "error", "\(o)")
            #expect(o["oversize_exit"] as? Int == 1)
        }
    }
}
}
