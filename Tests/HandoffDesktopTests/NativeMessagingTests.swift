@testable import HandoffDesktop
import Foundation
import Testing

@Suite("Native messaging")
struct NativeMessagingTests {
    func frame(_ s: String) -> [UInt8] { NativeMessageDecoder.encode(s)! }

    @Test func framesArriveWholeWhateverTheChunking() throws {
        let bytes = frame(#"{"type":"tab","url":"https://a.test/"}"#) + frame(#"{"b":1}"#)
        for size in [1, 2, 3, 5, 64] {
            var d = NativeMessageDecoder()
            var out: [String] = []
            var i = 0
            while i < bytes.count {
                out += try d.feed(bytes[i..<min(i + size, bytes.count)])
                i += size
            }
            try d.finish()
            #expect(out == [#"{"type":"tab","url":"https://a.test/"}"#, #"{"b":1}"#], "chunks of \(size)")
        }
    }

    @Test func badFramesAreClearErrors() {
        var d = NativeMessageDecoder(maximumInbound: 100)
        #expect(throws: NativeMessageDecoder.Failure.tooLarge(101)) { try d.feed(withUnsafeBytes(of: UInt32(101), Array.init)) }
        var e = NativeMessageDecoder()
        #expect(throws: NativeMessageDecoder.Failure.tooLarge(Int(UInt32.max))) { try e.feed([0xFF, 0xFF, 0xFF, 0xFF]) }
        var f = NativeMessageDecoder()
        #expect(throws: NativeMessageDecoder.Failure.notJSON) { try f.feed(self.frame("not json")) }
        var g = NativeMessageDecoder()
        #expect(throws: NativeMessageDecoder.Failure.notJSON) { try g.feed(withUnsafeBytes(of: UInt32(2), Array.init) + [0xC3, 0x28]) }
        var h = NativeMessageDecoder()
        _ = try? h.feed(Array(frame(#"{"a":1}"#).prefix(6)))
        #expect(throws: NativeMessageDecoder.Failure.truncated(6)) { try h.finish() }
        var z = NativeMessageDecoder()
        #expect((try? z.feed(withUnsafeBytes(of: UInt32(0), Array.init))) == nil, "an empty message is no JSON object")
    }

    @Test func outboundMessagesStayUnderTheBrowsersLimit() {
        #expect(NativeMessageDecoder.encode(String(repeating: "x", count: 1 << 20)) != nil)
        #expect(NativeMessageDecoder.encode(String(repeating: "x", count: (1 << 20) + 1)) == nil)
    }

    @Test func onlyPublicWebTabsAreOffered() {
        let never = HandlerDeclaration.domains("bank.example;*.private.test").valid
        #expect(BrowserTab(url: "https://news.test/a", title: "A", incognito: false).offerable(never: never))
        #expect(!BrowserTab(url: "https://news.test/a", title: "A", incognito: true).offerable(never: never))
        #expect(!BrowserTab(url: "file:///etc/passwd", title: "", incognito: false).offerable(never: never))
        #expect(!BrowserTab(url: "chrome://settings", title: "", incognito: false).offerable(never: never))
        #expect(!BrowserTab(url: "https://bank.example/login", title: "", incognito: false).offerable(never: never))
        #expect(!BrowserTab(url: "https://x.private.test/", title: "", incognito: false).offerable(never: never))
        #expect(BrowserTab(json: #"{"type":"tab","url":"https://a.test/","title":"T","incognito":false}"#)?.url == "https://a.test/")
        #expect(BrowserTab(json: #"{"type":"other"}"#) == nil)
    }
}

@Suite("Browser extension")
struct BrowserExtensionTests {
    /// The host manifest names the extension by the ID its manifest key gives it.
    @Test func shippedKeyGivesTheIDTheHostNames() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("extension/manifest.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let key = try #require(manifest["key"] as? String)
        #expect(BrowserExtension.chromiumID(publicKey: key) == BrowserExtension.chromiumID)
        #expect(BrowserExtension.chromiumID(publicKey: "not base64!") == nil)
    }

    /// What a package installs for each browser: Firefox names the extension, Chromium and
    /// Chrome its origin, all start the host at the given path.
    @Test func hostManifestsNameTheHostAndTheExtension() throws {
        for browser in BrowserExtension.Browser.allCases {
            let json = BrowserExtension.hostManifest(for: browser, hostPath: "/usr/libexec/handoff/handoff-browser-host").serialized()
            let manifest = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            #expect(manifest["name"] as? String == "org.handoff.browser")
            #expect(manifest["path"] as? String == "/usr/libexec/handoff/handoff-browser-host")
            #expect(manifest["type"] as? String == "stdio")
            if browser == .firefox {
                #expect(manifest["allowed_extensions"] as? [String] == [BrowserExtension.firefoxID])
                #expect(manifest["allowed_origins"] == nil)
            } else {
                #expect(manifest["allowed_origins"] as? [String] == ["chrome-extension://\(BrowserExtension.chromiumID)/"])
            }
        }
        let other = BrowserExtension.hostManifest(for: .chrome, hostPath: "/x", chromiumID: String(repeating: "b", count: 32)).serialized()
        #expect(other.contains("chrome-extension://\(String(repeating: "b", count: 32))/"))
    }

    /// The system folders are those each browser reads for every user (and a package fills).
    @Test func systemFoldersAreTheBrowsersOwn() {
        let folders = Dictionary(uniqueKeysWithValues: BrowserExtension.systemManifestFolders.map { ($0.browser, $0.folder) })
        #expect(folders[.firefox] == "/usr/lib/mozilla/native-messaging-hosts")
        #expect(folders[.chromium] == "/etc/chromium/native-messaging-hosts")
        #expect(folders[.chrome] == "/etc/opt/chrome/native-messaging-hosts")
    }

    /// The mapping, on a digest everyone can check.
    @Test func idIsTheDigestWrittenInLettersAToP() {
        // SHA-256 of the empty input starts e3b0c442 98fc1c14 9afbf4c8 996fb924.
        #expect(BrowserExtension.chromiumID(publicKey: "") == "odlameecjipmbmbejkplpemijjgpljce")
    }
}
