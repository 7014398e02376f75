import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffKDEConnect

/// What `handoffctl continue --on DEVICE` sends a KDE Connect device: the activity's web
/// page (`kdeconnect.share.request {"url"}`: the phone opens it in its browser), else its
/// text (`{"text"}`: the phone offers to copy it), else a media activity's URL.
struct ShareToDevice: Sendable {
    let activity: String
    let url: String?
    let text: String?

    var packet: KDEConnectPacket {
        var body: JSONObject = [:]
        if let url { body["url"] = .string(url) } else if let text { body["text"] = .string(text) }
        return KDEConnectPacket(type: "kdeconnect.share.request", body: body)
    }

    init(_ activity: Activity) throws(HandoffError) {
        self.activity = activity.id.rawValue
        if let page = activity.webpageURL {
            (url, text) = (page, nil)
        } else if activity.activityType == WellKnownActivityType.text, case .string(let t)? = activity.userInfo["text"] {
            (url, text) = (nil, t)
        } else if activity.activityType == WellKnownActivityType.media, let media = activity.userInfo["url"], let u = Self.string(media),
                  u.hasPrefix("http://") || u.hasPrefix("https://") {
            (url, text) = (u, nil)
        } else {
            throw HandoffError(.invalid, code: "nothing_to_send",
                               message: "\"\(activity.title.prefix(80))\" (\(activity.activityType.prefix(80))) has no web page or text a phone could open")
        }
    }

    private static func string(_ v: PropertyValue) -> String? {
        switch v {
        case .string(let s), .url(let s): s
        default: nil
        }
    }

    /// `which`: an activity's id (this workstation's, else an offer of another's), or
    /// `current`: the newest of this workstation's current activity and the others' offers.
    static func find(_ which: String, through handoff: HandoffClient) async throws -> ShareToDevice {
        do {
            if which != "current" {
                if let own = try? await handoff.activity(which) { return try ShareToDevice(own.activity) }
                return try ShareToDevice(try await handoff.continueActivity(id: which).record.activity)
            }
            let own = try await handoff.current()
            let offer = try await handoff.offers().filter { !$0.stale }.max { $0.activity.updatedAt < $1.activity.updatedAt }
            if let offer, own.map({ offer.activity.updatedAt > $0.activity.updatedAt }) ?? true {
                return try ShareToDevice(try await handoff.continueActivity(id: offer.activity.id.rawValue).record.activity)
            }
            guard let own else {
                throw HandoffError(.notFound, code: "no_activity", message: "there is no current activity to send, here or on your other workstations")
            }
            return try ShareToDevice(own.activity)
        } catch HandoffClientError.api(let e) {
            throw HandoffError(.notFound, code: e.code, message: e.message)
        }
    }
}
