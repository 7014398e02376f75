import HandoffControlAPI
import HandoffCore
import HandoffKDEConnect
import NIOCore

/// Everything the endpoint reacts to, in the order it happened: the network's events from
/// the event loops, handoffd's requests, and its own timers. One task takes them one at a
/// time (`KDEConnectEndpoint.run`), so its state needs no lock.
enum EndpointEvent: @unchecked Sendable {
    /// A UDP identity (read and checked) from this address.
    case heard(KDEConnectIdentity, host: String)
    /// A connection came in; the endpoint admits it or closes it.
    case accepted(Int, Channel)
    /// Its plain identity arrived.
    case identified(Int)
    case linked(LinkUp)
    case packet(Int, KDEConnectDeviceID, KDEConnectPacket)
    case unreadable(Int, KDEConnectDeviceID, String)
    /// The connection closed or was refused; `device`: linked, or dialled, to it.
    case closed(Int, KDEConnectDeviceID?, dialled: KDEConnectDeviceID?)
    case refused(Int, KDEConnectDeviceID?, String)
    case dialFailed(KDEConnectDeviceID, String)
    /// mDNS found a device at this IPv4 address.
    case foundByMDNS(KDEConnectDeviceID, address: String)
    /// Time to send a device our identity by unicast, unless it is linked or being linked
    /// by then (after mDNS found it, or after its link closed).
    case announceTo(KDEConnectDeviceID, address: String)
    /// A pairing request's 30 s may be up.
    case pairingDue(KDEConnectDeviceID)
    /// handoffd asks.
    case request(id: Int64, op: String, fields: JSONObject)
    /// What a `send` request found to send (looked up without holding up other events).
    case send(requestID: Int64, device: KDEConnectDeviceID, Result<ShareToDevice, HandoffError>)
    /// The account's newest copy changed (handoffd's `clipboard` event).
    /// `baseline`: the copy there was when the endpoint started (or reconnected): it is not sent.
    case clipboardChanged(ClipboardRecord?, baseline: Bool)
    /// The text of copy `id`, pasted to send to the devices that take this workstation's copies.
    case clipboardText(ClipboardID, String)
    /// handoffd went away: time to stop.
    case handoffdGone
}

/// The one queue of events, written from any thread.
struct EndpointEvents: Sendable {
    let stream: AsyncStream<EndpointEvent>
    private let continuation: AsyncStream<EndpointEvent>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: EndpointEvent.self)
    }

    func send(_ event: EndpointEvent) { continuation.yield(event) }
    func finish() { continuation.finish() }
}
