import Foundation
import HandoffTestSupport
import Testing

/// What an attacker on the network reads from the links between members (Security.md
/// 3.1): a capture of every TCP packet between two workstations while one offers an
/// activity, the other continues it, and a copy is pasted across. No title, no payload,
/// no URL, no clipboard byte and no device name appears in it. Root only.
extension WorkstationTests {
@Suite struct LinkSecrecyTests {
    @Test func aCaptureOfTheLinksHoldsNoActivityOfferOrClipboardInTheClear() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            let marker = String(UUID().uuidString.prefix(8))
            let (title, payload, url, clip) = ("title-\(marker)", "payload-\(marker)", "https://example.org/page-\(marker)", "clipboard-\(marker)")
            // From before they trust each other: the capture holds the links' handshakes too.
            let pcap = net.directory + "/links.pcap"
            let tshark = try await net.capture(on: "b", filter: "tcp", seconds: 25, to: pcap)
            try await net.pair("a", "b")
            let idA = try await net.deviceID("a")
            try await eventually(20, "a and b to link") { try await net.isConnected("b", to: idA) }
            let offered = try await net.ctl("a", "become-current", "--type", "org.example.secret", "--title", title,
                                            "--webpage-url", url, "--info", "secret=\(payload)")
            #expect(offered.status == 0, "\(offered)")
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains(title) }
            let continued = try await net.ctl("b", "continue", "--print")
            #expect(continued.status == 0 && continued.stdout.contains(payload), "b got the payload: \(continued)")
            #expect(try await net.ctl("a", "copy", stdin: clip).status == 0)
            try await eventually(10, "the copy to be announced to b") { try await net.ctl("b", "clipboard").stdout.contains("text/plain") }
            let pasted = try await net.ctl("b", "paste")
            #expect(pasted.status == 0 && pasted.stdout == clip, "\(pasted)")
            #expect(try await net.wait(tshark, timeout: 40) == 0)

            let raw = try Data(contentsOf: URL(fileURLWithPath: pcap))
            let tls = try await CommandLineTool.run("/usr/bin/tshark", ["-r", pcap, "-Y", "tls.handshake.type == 1", "-T", "fields", "-e", "tls.handshake.type"],
                                                    environment: net.environment)
            #expect(raw.count > 10_000 && tls.stdout.split(separator: "\n").count >= 1, "the capture holds the links' traffic and a handshake: \(raw.count) bytes, \(tls)")
            for secret in [title, payload, marker, clip, "ws-a", "ws-b", idA, "org.example.secret"] {
                #expect(raw.range(of: Data(secret.utf8)) == nil, "the capture holds \(secret) in the clear")
            }
        }
    }
}
}
