import Crypto
import FoundationEssentials
import HandoffCore
import HandoffSystem

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
    public enum Browser: String, CaseIterable, Sendable {
        case firefox = "Firefox", chromium = "Chromium", chrome = "Chrome"
    }

    /// The native-messaging host manifest that lets `browser` start the host at `hostPath`
    /// for the shipped extension (or, in Chromium and Chrome, the one whose ID is given).
    public static func hostManifest(for browser: Browser, hostPath: String, chromiumID: String = chromiumID) -> JSONValue {
        var manifest: JSONObject = ["name": .string(nativeHostName), "description": .string("handoff: offers the focused tab to your other workstations"),
                                    "path": .string(hostPath), "type": .string("stdio")]
        if browser == .firefox {
            manifest["allowed_extensions"] = .array([.string(firefoxID)])
        } else {
            manifest["allowed_origins"] = .array([.string("chrome-extension://\(chromiumID)/")])
        }
        return .object(manifest)
    }

    /// Where each browser looks for host manifests installed for every user (a package
    /// puts them there); a user's own folders come first when both hold one.
    public static let systemManifestFolders: [(browser: Browser, folder: String)] = [
        (.firefox, "/usr/lib/mozilla/native-messaging-hosts"), (.chromium, "/etc/chromium/native-messaging-hosts"),
        (.chrome, "/etc/opt/chrome/native-messaging-hosts"),
    ]

    /// Where each browser looks for a user's host manifests.
    public static func manifestFolders() -> [(browser: Browser, folder: String)] {
        let home = DefaultPaths.homeDirectory
        let config = DefaultPaths.configHome ?? home + "/.config"
        return [(.firefox, home + "/.mozilla/native-messaging-hosts"), (.chromium, config + "/chromium/NativeMessagingHosts"),
                (.chrome, config + "/google-chrome/NativeMessagingHosts")]
    }

    /// The browsers whose folders (the user's or the system's) hold this host's manifest.
    public static func installedHosts() -> [String] {
        var browsers: [String] = []
        for (browser, folder) in manifestFolders() + systemManifestFolders
        where !browsers.contains(browser.rawValue) && FileManager.default.fileExists(atPath: folder + "/" + nativeHostName + ".json") {
            browsers.append(browser.rawValue)
        }
        return browsers
    }
}
