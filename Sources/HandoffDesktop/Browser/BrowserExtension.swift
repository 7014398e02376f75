import Crypto
import Foundation
import HandoffWire

/// The shipped extension's identity in Chromium. `extension/manifest.json` carries a public
/// key (its private half was thrown away: it only fixes the ID), so the unpacked extension
/// has the same ID on every machine and the host manifest can name it without asking.
public enum BrowserExtension {
    public static let nativeHostName = "org.handoff.browser"
    public static let firefoxID = "handoff-browser@handoff.invalid"
    /// `chromiumID(publicKey:)` of the key in `extension/manifest.json` (a test keeps them in step).
    public static let chromiumID = "dmdgocaejblkggfdfhfgblajlkjeedhe"

    /// Chromium's extension ID for a manifest `key` (base64 DER public key): the first 16
    /// bytes of its SHA-256, each hex digit 0-f written as a letter a-p.
    public static func chromiumID(publicKey base64: String) -> String? {
        guard let der = Data(base64Encoded: base64) else { return nil }
        let digest = SHA256.hash(data: der)
        let letters = Array("abcdefghijklmnop")
        return String(digest.prefix(16).flatMap { [letters[Int($0 >> 4)], letters[Int($0 & 0xF)]] })
    }
}

extension BrowserExtension {
    /// Where each browser looks for a user's host manifests.
    public static func manifestFolders() -> [(browser: String, folder: String)] {
        let home = DefaultPaths.homeDirectory
        let config = DefaultPaths.configHome ?? home + "/.config"
        return [("Firefox", home + "/.mozilla/native-messaging-hosts"), ("Chromium", config + "/chromium/NativeMessagingHosts"),
                ("Chrome", config + "/google-chrome/NativeMessagingHosts")]
    }

    /// The browsers whose folder holds this host's manifest.
    public static func installedHosts() -> [String] {
        manifestFolders().filter { FileManager.default.fileExists(atPath: $0.folder + "/" + nativeHostName + ".json") }.map(\.browser)
    }
}
