import Foundation
import HandoffTestSupport

/// A real handoffd process with its own runtime and state directories.
final class DaemonProcess: @unchecked Sendable {
    let directory: String
    let socketPath: String
    let stateDirectory: String
    let logPath: String
    let extraArguments: [String]
    /// Only a daemon that made its directory removes it.
    private let ownsDirectory: Bool
    private(set) var process: Process?

    init(arguments: [String] = [], directory: String? = nil) throws {
        self.directory = try directory ?? TestEnvironment.makeTemporaryDirectory()
        ownsDirectory = directory == nil
        socketPath = self.directory + "/run/handoff/handoffd.sock"
        stateDirectory = self.directory + "/state/handoff"
        logPath = self.directory + "/handoffd.log"
        extraArguments = arguments
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = directory + "/run"
        env["XDG_STATE_HOME"] = directory + "/state"
        env["XDG_CONFIG_HOME"] = directory + "/config"
        env["HANDOFF_SOCKET"] = socketPath
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "LISTEN_FDS")
        env.removeValue(forKey: "LISTEN_PID")
        return env
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Starts handoffd and, with `waitUntilReady`, waits until it says it is ready (sd_notify's
    /// READY=1, as under systemd) and its socket answers. Only a few start at once
    /// (`DaemonStartSlots`); the deadline counts from the daemon's own start.
    @discardableResult
    func start(waitUntilReady: Bool = true) async throws -> DaemonProcess {
        guard waitUntilReady else { try launch(notify: nil); return self }
        try await DaemonStartSlots.shared.withSlot {
            let readiness = try ReadinessSocket(path: self.directory + "/notify.sock")
            let started = Date()
            let p = try self.launch(notify: readiness.path)
            // 30 s: far more than a start takes even on a loaded machine; what the tests
            // assert comes after the start.
            let timeout = 30.0
            guard await readiness.waitForReady(of: p, timeout: timeout) else {
                if !p.isRunning { throw TestFailure("handoffd exited with \(p.terminationStatus):\n\(self.log())") }
                throw TestFailure("handoffd did not say it was ready within \(timeout) s (\(ProcessSnapshot.describe(p.processIdentifier))); " +
                                  "its log after \(String(format: "%.1f", -started.timeIntervalSinceNow)) s:\n\(self.log())")
            }
            guard UnixSocketProbe.canConnect(self.socketPath) else {
                throw TestFailure("handoffd said it was ready but \(self.socketPath) does not accept connections:\n\(self.log())")
            }
        }
        return self
    }

    @discardableResult
    private func launch(notify: String?) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try TestEnvironment.binary("handoffd"))
        // Outside network namespaces: no mDNS at all, and peers only on loopback.
        p.arguments = ["--name", "test-device", "--socket", socketPath, "--state-dir", stateDirectory, "--log-level", "debug",
                       "--no-discovery", "--peer-listen", "127.0.0.1"] + extraArguments
        var env = environment
        if let notify { env["NOTIFY_SOCKET"] = notify }
        p.environment = env
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        // A handle that never closes itself: Foundation's Process closes the descriptor it
        // was given, and a second close from the handle's deinit crashed the test run with
        // EBADF under parallel load. The descriptor is left to the process's exit.
        let fd = open(logPath, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(logPath)") }
        let logFile = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        p.standardError = logFile
        p.standardOutput = logFile
        try p.run()
        process = p
        return p
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The peer port this run listens on, from its log.
    func peerPort() async throws -> Int {
        var port: Int?
        try await eventually("handoffd's peer listener") {
            let line = self.log().split(separator: "\n").last { $0.contains("peer listener ready") }
            port = line?.split(separator: " ").first { $0.hasPrefix("port=") }.flatMap { Int($0.dropFirst(5)) }
            return port != nil
        }
        return port!
    }

    func signal(_ sig: Int32) { if let p = process, p.isRunning { kill(p.processIdentifier, sig) } }

    /// SIGKILL and reap.
    func crash() async {
        signal(SIGKILL)
        await process?.exit()
        checkSanitizerReports()
    }

    /// SIGTERM, wait, and return the exit status.
    @discardableResult
    func stop() async -> Int32 {
        guard let p = process else { return -1 }
        if p.isRunning { kill(p.processIdentifier, SIGTERM) }
        await p.exit()
        checkSanitizerReports()
        return p.terminationStatus
    }

    /// Once per daemon: its log only grows.
    private var sanitizerReported = false
    private func checkSanitizerReports() {
        guard !sanitizerReported else { return }
        sanitizerReported = SanitizerReports.check(logPath)
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL) }
        // A daemon never stopped by its test: what a sanitizer reported while it ran.
        if process != nil { checkSanitizerReports() }
        if ownsDirectory && ProcessInfo.processInfo.environment["HANDOFF_KEEP_TEST_DIRS"] == nil {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}

enum UnixSocketProbe {
    static func canConnect(_ path: String) -> Bool {
        guard let s = try? RawUnixSocket(path: path) else { return false }
        s.close()
        return true
    }
}
