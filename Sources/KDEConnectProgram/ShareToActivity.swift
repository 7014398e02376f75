import HandoffCore
import HandoffKDEConnect

/// What a device's `kdeconnect.share.request` becomes in handoff: a web page
/// (`handoff.browsing-web`, for an http or https `url`), or text (`handoff.text`, for
/// `text`, or a `url` of another scheme such as `tel:` or `geo:`). A file share
/// (a payload) is not taken yet. The activity is this workstation's, owned by handoffd,
/// so it stays offered when the endpoint restarts.
enum ShareToActivity {
    /// Text longer than this is cut: an activity's payload is small by design.
    static let textLimit = 60 * 1024

    static func draft(_ packet: KDEConnectPacket, from deviceName: String) -> ActivityDraft? {
        guard packet.payload == nil else { return nil }
        if let url = packet.body["url"]?.stringValue, !url.isEmpty {
            let lower = url.lowercased()
            if (lower.hasPrefix("https://") || lower.hasPrefix("http://")) && url.utf8.count <= 8192 {
                var d = ActivityDraft(activityType: WellKnownActivityType.browsingWeb)
                d.webpageURL = url
                d.title = "Shared from \(deviceName)"
                return d
            }
            return text(url, from: deviceName)
        }
        if let text = packet.body["text"]?.stringValue, !text.isEmpty {
            return self.text(text, from: deviceName)
        }
        return nil
    }

    private static func text(_ text: String, from deviceName: String) -> ActivityDraft {
        var d = ActivityDraft(activityType: WellKnownActivityType.text)
        var bytes = 0
        let kept = text.prefix { c in
            bytes += c.utf8.count
            return bytes <= textLimit
        }
        d.userInfo = ["text": .string(String(kept))]
        d.requiredUserInfoKeys = ["text"]
        d.title = "Text shared from \(deviceName)"
        return d
    }
}
