import Foundation
import HandoffCore
import Testing
@testable import HandoffKDEConnect

/// Packets and identities as KDE Connect writes them, and everything a hostile peer could
/// send instead: refused with a reason, never a crash.
@Suite("KDE Connect packets")
struct KDEConnectPacketTests {
    static let id22 = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"
    /// An identity as kdeconnect 22.12 sends it by UDP (the id a string).
    static let udp22 = #"{"id":"1765000000000","type":"kdeconnect.identity","body":{"deviceId":"1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d","deviceName":"kde-desk","deviceType":"desktop","protocolVersion":7,"incomingCapabilities":["kdeconnect.share.request","kdeconnect.clipboard","kdeconnect.ping"],"outgoingCapabilities":["kdeconnect.share.request","kdeconnect.clipboard"],"tcpPort":1716}}"#
    /// The plain identity a 25.12 device writes when it connects (v8, with its target).
    static let plain25 = #"{"id":1765000000000,"type":"kdeconnect.identity","body":{"deviceId":"_9f8e7d6c5b4a39281706f5e4d3c2b1a0-x","deviceName":"Pixel 9","deviceType":"smartphone","protocolVersion":8,"incomingCapabilities":[],"outgoingCapabilities":[],"tcpPort":1718,"targetDeviceId":"1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d","targetProtocolVersion":8}}"#

    func packet(_ text: String, limit: Int = 8192) throws(KDEConnectError) -> KDEConnectPacket {
        try KDEConnectPacket.decode(Array(text.utf8), limit: limit)
    }

    @Test func identitiesOfBothVersionsAreRead() throws {
        let v7 = try KDEConnectIdentity(packet(Self.udp22), needsPort: true)
        #expect(v7.deviceID.rawValue == Self.id22 && v7.name == "kde-desk" && v7.type == .desktop && v7.protocolVersion == 7 && v7.tcpPort == 1716)
        #expect(v7.incomingCapabilities.contains("kdeconnect.share.request") && v7.outgoingCapabilities.count == 2)
        let v8 = try KDEConnectIdentity(packet(Self.plain25), needsPort: true)
        #expect(v8.type == .phone && v8.protocolVersion == 8 && v8.targetDeviceID == Self.id22 && v8.targetProtocolVersion == 8)
        // What we write reads back the same.
        let line = v8.packet().encoded(id: 1)
        #expect(line.last == UInt8(ascii: "\n") && !line.dropLast().contains(UInt8(ascii: "\n")))
        #expect(try KDEConnectIdentity(KDEConnectPacket.decode(line.dropLast(), limit: 8192), needsPort: true) == v8)
    }

    @Test func deviceIDsFollowKDEsRule() {
        #expect(KDEConnectDeviceID(String(repeating: "a", count: 32)) != nil)
        #expect(KDEConnectDeviceID(String(repeating: "Z", count: 38)) != nil)
        #expect(KDEConnectDeviceID("_-" + String(repeating: "0", count: 30)) != nil)
        for bad in [String(repeating: "a", count: 31), String(repeating: "a", count: 39), String(repeating: "a", count: 31) + "/",
                    String(repeating: "a", count: 31) + "é", String(repeating: "a", count: 31) + " ", "../../" + String(repeating: "a", count: 30), ""] {
            #expect(KDEConnectDeviceID(bad) == nil, "\(bad)")
        }
        let made = (0..<100).map { _ in KDEConnectDeviceID.random() }
        #expect(Set(made).count == 100)
        #expect(made.allSatisfy { $0.rawValue.utf8.count == 32 && $0.rawValue == $0.rawValue.lowercased() })
    }

    @Test func namesAreFilteredAsKDEFiltersThem() throws {
        #expect(KDEConnectIdentity.filterName("Ann's \"phone\" (work)!") == "Anns phone work")
        #expect(KDEConnectIdentity.filterName(String(repeating: "x", count: 40)).count == 32)
        #expect(KDEConnectIdentity.filterName("a\u{1B}[31mred\u{07}") == "a31mred")
        for name in ["", "...", "  ", "()[]<>"] {
            let text = Self.udp22.replacingOccurrences(of: "kde-desk", with: name)
            #expect(throws: KDEConnectError.self) { try KDEConnectIdentity(packet(text), needsPort: true) }
        }
    }

    @Test func whatAPeerGetsWrongIsRefused() {
        let bad: [(String, String)] = [
            ("not JSON", "{"),
            ("not an object", "[1]"),
            ("no type", #"{"body":{}}"#),
            ("not a kdeconnect type", #"{"type":"x.identity","body":{}}"#),
            ("a body that is a string", #"{"type":"kdeconnect.ping","body":"x"}"#),
            ("a negative payload", #"{"type":"kdeconnect.share.request","body":{},"payloadSize":-1,"payloadTransferInfo":{"port":1739}}"#),
            ("a payload without a port", #"{"type":"kdeconnect.share.request","body":{},"payloadSize":10}"#),
            ("a payload port outside KDE's range", #"{"type":"kdeconnect.share.request","body":{},"payloadSize":10,"payloadTransferInfo":{"port":22}}"#),
            ("a payload size that is text", #"{"type":"kdeconnect.share.request","body":{},"payloadSize":"10","payloadTransferInfo":{"port":1739}}"#),
        ]
        for (what, text) in bad {
            #expect(throws: KDEConnectError.self, "\(what)") { try packet(text) }
        }
        // Over the limit, before it is parsed.
        #expect(throws: KDEConnectError.self) { try packet(Self.udp22, limit: 100) }
        // A payload in range is read.
        let share = try? packet(#"{"type":"kdeconnect.share.request","body":{"filename":"a"},"payloadSize":10,"payloadTransferInfo":{"port":1739}}"#)
        #expect(share?.payload == .init(size: 10, port: 1739))
    }

    @Test func identitiesAPeerGetsWrongAreRefused() throws {
        let replacements: [(String, String, String)] = [
            ("a port outside the range", #""tcpPort":1716"#, #""tcpPort":22"#),
            ("a port that is text", #""tcpPort":1716"#, #""tcpPort":"1716""#),
            ("a port of 2^63-1", #""tcpPort":1716"#, #""tcpPort":9223372036854775807"#),
            ("no version", #""protocolVersion":7,"#, ""),
            ("a version of text", #""protocolVersion":7"#, #""protocolVersion":"7""#),
            ("a short id", Self.id22, "abc"),
            ("a capability that is not text", #""kdeconnect.ping"]"#, "1]"),
            ("a capability that is not KDE's", #""kdeconnect.ping"]"#, #""rm -rf"]"#),
            ("too many capabilities", #"["kdeconnect.share.request","kdeconnect.clipboard","kdeconnect.ping"]"#,
             "[" + (0..<200).map { "\"kdeconnect.c\($0)\"" }.joined(separator: ",") + "]"),
        ]
        for (what, from, to) in replacements {
            let text = Self.udp22.replacingOccurrences(of: from, with: to)
            #expect(text != Self.udp22, "\(what): the replacement applies")
            #expect(throws: KDEConnectError.self, "\(what)") { try KDEConnectIdentity(packet(text), needsPort: true) }
        }
        // Inside TLS no port is needed; a UDP identity without one is refused.
        let noPort = Self.udp22.replacingOccurrences(of: #","tcpPort":1716"#, with: "")
        #expect(try KDEConnectIdentity(packet(noPort), needsPort: false).tcpPort == nil)
        #expect(throws: KDEConnectError.self) { try KDEConnectIdentity(packet(noPort), needsPort: true) }
        // Another packet where an identity is due.
        #expect(throws: KDEConnectError.self) { try KDEConnectIdentity(KDEConnectPacket(type: "kdeconnect.pair"), needsPort: false) }
    }

    /// CVE-2025-66270: the identity inside TLS counts only if it is the same device, in the
    /// same version, and the certificate names it.
    @Test func theIdentityInsideTLSMustMatchThePlainOneAndTheCertificate() throws {
        let plain = try KDEConnectIdentity(packet(Self.plain25), needsPort: true)
        var inside = plain
        inside.tcpPort = nil
        inside.name = "Renamed inside"
        let kept = try KDEConnectIdentity.secure(inside, plain: plain, certificateCN: plain.deviceID.rawValue)
        #expect(kept.name == "Renamed inside" && kept.tcpPort == plain.tcpPort)
        var otherID = inside
        otherID.deviceID = KDEConnectDeviceID.random()
        #expect(throws: KDEConnectError.self) { try KDEConnectIdentity.secure(otherID, plain: plain, certificateCN: plain.deviceID.rawValue) }
        var downgraded = inside
        downgraded.protocolVersion = 7
        #expect(throws: KDEConnectError.self) { try KDEConnectIdentity.secure(downgraded, plain: plain, certificateCN: plain.deviceID.rawValue) }
        #expect(throws: KDEConnectError.self) { try KDEConnectIdentity.secure(inside, plain: plain, certificateCN: "someone else") }
        #expect(throws: KDEConnectError.self) { try KDEConnectIdentity.secure(inside, plain: plain, certificateCN: nil) }
    }

    /// Thousands of damaged packets: each is refused or read, none crashes or is read as
    /// more than it says.
    @Test func thousandsOfDamagedIdentitiesAreRefusedOrRead() {
        var generator = SystemRandomNumberGenerator()
        let base = Array(Self.plain25.utf8)
        var read = 0
        for round in 0..<5000 {
            var bytes = base
            switch round % 4 {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
            case 1: for _ in 0..<4 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            case 2: bytes.insert(contentsOf: Array(repeating: UInt8(ascii: "["), count: Int.random(in: 1...300, using: &generator)), at: Int.random(in: 0..<bytes.count, using: &generator))
            default: bytes = (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            if let p = try? KDEConnectPacket.decode(bytes, limit: KDEConnectLimits.identityBytes), let identity = try? KDEConnectIdentity(p, needsPort: true) {
                read += 1
                #expect(KDEConnectDeviceID(identity.deviceID.rawValue) != nil && !identity.name.isEmpty && identity.name.count <= 32)
                #expect(KDEConnectLimits.ports.contains(identity.tcpPort ?? 0))
            }
        }
        #expect(read < 5000)
    }
}
