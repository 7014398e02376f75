import HandoffAvahi
import HandoffKDEConnect
import Logging

/// KDE Connect's mDNS (kdeconnect 24.02 and later, the current apps): `_kdeconnect._udp`,
/// the instance named by the device id, the UDP port 1716, TXT `id`, `name`, `type`,
/// `protocol`; through the system's avahi-daemon. A device found this way is told to the
/// endpoint, which sends it our identity by UDP, to its address alone, so it dials us: as
/// KDE does it, and what reaches a device where broadcasts do not (a network that drops
/// them, or has no route for 255.255.255.255). Only while KDE Connect is on, like the
/// broadcasts.
final class DeviceAnnouncement: Sendable {
    static let serviceType = "_kdeconnect._udp"
    let avahi: AvahiDiscovery
    private let task: Task<Void, Never>

    init(own: KDEConnectIdentity, udpPort: Int, events: EndpointEvents, log: Logger) throws {
        avahi = AvahiDiscovery(serviceType: Self.serviceType, ipv4Only: true, logger: log)
        avahi.publish(ServiceAdvertisement(name: own.deviceID.rawValue, port: UInt16(clamping: udpPort), txt: [
            ("id", own.deviceID.rawValue), ("name", own.name), ("type", own.type.rawValue), ("protocol", String(own.protocolVersion)),
        ]))
        let found = avahi.events
        task = Task {
            var answered: Set<String> = []
            for await event in found {
                switch event {
                case .found(let service):
                    // Our UDP socket is IPv4, as KDE's identities are; the id must be one.
                    guard service.key.name != own.deviceID.rawValue, let id = KDEConnectDeviceID(service.key.name),
                          !service.address.contains(":") else { continue }
                    let key = "\(service.key.name) \(service.address)"
                    guard answered.insert(key).inserted else { continue }
                    events.send(.foundByMDNS(id, address: service.address))
                case .removed(let key):
                    answered = answered.filter { !$0.hasPrefix(key.name + " ") }
                case .status(let status):
                    log.debug("mDNS", metadata: ["status": "\(status)"])
                case .published(let name):
                    log.debug("announced by mDNS", metadata: ["name": "\(name)"])
                }
            }
        }
        try avahi.start()
    }

    func stop() {
        avahi.stop()
        task.cancel()
    }
}
