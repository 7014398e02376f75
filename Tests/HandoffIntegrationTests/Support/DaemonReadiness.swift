import Foundation
import HandoffTestSupport

/// How many handoffds may be starting at once. At the suite's start a hundred tests each
/// start one, on two cores: all at once, each start took 12 to 40 s and some missed their
/// deadline; a few at a time, each takes well under a second and the whole is no slower.
actor DaemonStartSlots {
    static let shared = DaemonStartSlots(ProcessInfo.processInfo.environment["HANDOFF_TEST_PARALLEL_STARTS"].flatMap(Int.init)
                                         ?? max(2, ProcessInfo.processInfo.activeProcessorCount * 2))

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    /// Runs `body` holding a slot.
    func withSlot<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        if free > 0 { free -= 1; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// The socket a started handoffd tells it is ready on, as it tells systemd (sd_notify's
/// READY=1, sent once its control socket listens).
final class ReadinessSocket: @unchecked Sendable {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var addr = unixAddress(path)
        guard path.utf8.count < MemoryLayout.size(ofValue: addr.sun_path) else { Glibc.close(fd); throw TestFailure("path too long: \(path)") }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { let e = errno; Glibc.close(fd); throw TestFailure("bind \(path): errno \(e)") }
    }

    /// Waits until a datagram says READY=1 (true), `process` exits, or `timeout` passes (false).
    func waitForReady(of process: Process, timeout: Double) async -> Bool {
        await offPool { () -> Bool in
            let deadline = Date().addingTimeInterval(timeout)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline, process.isRunning {
                var pfd = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pfd, 1, 100) > 0 else { continue }
                let n = recv(self.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n > 0, String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").contains("READY=1") { return true }
            }
            return false
        }
    }

    deinit {
        Glibc.close(fd)
        unlink(path)
    }
}

/// What a process was doing, for a test that waited on it in vain: its state and CPU time
/// from /proc, and how many of the suite's processes were runnable.
enum ProcessSnapshot {
    static func describe(_ pid: Int32) -> String {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return "pid \(pid): gone" }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state (3), ..., utime (14), stime (15), in clock ticks.
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpu = fields.count > 12 ? ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks : 0
        let threads = fields.count > 17 ? String(fields[17]) : "?"
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
        return "pid \(pid): state \(fields.first ?? "?"), \(String(format: "%.2f", cpu)) s of CPU, \(threads) threads, waiting in \(wchan.isEmpty ? "-" : wchan); load average \(load)"
    }
}
