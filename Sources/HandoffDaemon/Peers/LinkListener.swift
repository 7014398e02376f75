import HandoffCore
import HandoffPeerProtocol
import NIOCore

/// A link as the services beside the link layer see it: which device, which protocol
/// version, and a way to send. `PeerLink` is one; a unit test passes its own.
protocol LinkEnd: AnyObject, Sendable {
    var deviceID: DeviceID { get }
    var deviceName: String { get }
    /// The protocol version the link speaks.
    var version: UInt16 { get }
    /// Where the peer accepts stream connections, if it said.
    var streamAddress: SocketAddress? { get }
    /// Queues a message; never waits (a peer that stopped reading loses its link).
    func send(_ message: PeerMessage)
}

extension PeerLink: LinkEnd {}

/// What a concern's service hears from the link layer (`PeerService`). Per device, in the
/// order it happened: up once `PeerBook` took the link, down once it ended as the device's
/// current link. A link replaced by a newer one never goes down: its successor came up.
protocol LinkListener: Actor {
    func linkUp(_ link: any LinkEnd)
    func linkDown(_ link: any LinkEnd)
}

/// The links a service knows are up, by device (the newest one of each).
struct LinkedPeers: Sendable {
    private(set) var byDevice: [DeviceID: any LinkEnd] = [:]

    mutating func up(_ link: any LinkEnd) { byDevice[link.deviceID] = link }

    /// False when `link` was not the device's current one (a stale down is ignored).
    @discardableResult
    mutating func down(_ link: any LinkEnd) -> Bool {
        guard let current = byDevice[link.deviceID], current === link else { return false }
        byDevice[link.deviceID] = nil
        return true
    }

    var all: Dictionary<DeviceID, any LinkEnd>.Values { byDevice.values }

    subscript(_ id: DeviceID) -> (any LinkEnd)? { byDevice[id] }
}
