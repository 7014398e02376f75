import CHandoffSystem
import HandoffAvahi
import HandoffSystem
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Notices network changes as they happen: the kernel's link, address and route
/// notifications (rtnetlink) wake it, and it compares snapshots, so an idle daemon is not
/// woken by a timer and a burst of notifications costs one look.
enum NetworkWatch {
    /// Runs until cancelled, calling `changed` after each change that matters.
    static func run(group: EventLoopGroup, logger: Logger, initial: NetworkSnapshot, settle: TimeAmount = .milliseconds(300),
                    changed: @escaping @Sendable (NetworkSnapshot, NetworkSnapshot.Change) async -> Void) async {
        var last = initial
        func look() async {
            let now = snapshot()
            if let change = now.change(from: last) {
                last = now
                await changed(now, change)
            }
        }
        while !Task.isCancelled {
            let fd = handoff_route_change_socket()
            guard fd >= 0 else {
                logger.warning("cannot watch for network changes; peers are redialled on their own schedule",
                               metadata: ["error": "\(String(cString: strerror(-fd)))"])
                return
            }
            do {
                let channel: NIOAsyncChannel<ByteBuffer, Never>
                do {
                    channel = try await NIOPipeBootstrap(group: group).takingOwnershipOfDescriptor(input: fd) { channel in
                        channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, Never>(wrappingChannelSynchronously: channel) }
                    }
                } catch {
                    close(fd)  // still ours when the bootstrap fails
                    throw error
                }
                try await channel.executeThenClose { inbound in
                    for try await _ in inbound {
                        // A change arrives as a burst (address, route, neighbour): let it settle.
                        try await group.any().scheduleTask(in: settle) {}.futureResult.get()
                        await look()
                    }
                }
            } catch is CancellationError {
                return
            } catch {
                // ENOBUFS after a flood of notifications, say: something changed; look, and reopen.
                logger.debug("network watch reopens", metadata: ["error": "\(error)"])
            }
            if Task.isCancelled { return }
            await look()
            try? await group.any().scheduleTask(in: .seconds(1)) {}.futureResult.get()
        }
    }

    /// One `getifaddrs` entry: an interface, its flags (IFF_*), and an IPv4 or IPv6
    /// address (numeric, without a scope) if the entry has one.
    struct InterfaceEntry {
        var name: String
        var index: Int32
        var flags: UInt32
        var address: String?
        static let up: UInt32 = 0x1, loopback: UInt32 = 0x8, multicast: UInt32 = 0x1000
        var isUpAndNotLoopback: Bool { flags & Self.up != 0 && flags & Self.loopback == 0 }
    }

    static func interfaces() -> [InterfaceEntry] {
        var out: [InterfaceEntry] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return out }
        defer { freeifaddrs(first) }
        var next: UnsafeMutablePointer<ifaddrs>? = first
        while let ifa = next?.pointee {
            next = ifa.ifa_next
            var entry = InterfaceEntry(name: String(cString: ifa.ifa_name), index: Int32(bitPattern: if_nametoindex(ifa.ifa_name)), flags: ifa.ifa_flags)
            if let sa = ifa.ifa_addr, case let family = Int32(sa.pointee.sa_family), family == AF_INET || family == AF_INET6 {
                let length = family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
                var host = [CChar](repeating: 0, count: 64)
                if getnameinfo(sa, socklen_t(length), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                    let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    entry.address = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
                }
            }
            out.append(entry)
        }
        return out
    }

    /// The addresses of interfaces that are up (not loopback) and the routes.
    static func snapshot() -> NetworkSnapshot {
        var s = NetworkSnapshot()
        for e in interfaces() where e.isUpAndNotLoopback {
            if let address = e.address { s.addresses.insert(HostAddress(interfaceIndex: e.index, address: address)) }
        }
        func text(_ path: String) -> String {
            (try? BoundedFile.read(path, limit: 4 << 20)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        s.routes = NetworkSnapshot.ipv4Routes(text("/proc/net/route")).union(NetworkSnapshot.ipv6Routes(text("/proc/net/ipv6_route")))
        return s
    }
}
