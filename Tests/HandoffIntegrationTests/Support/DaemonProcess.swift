import Foundation

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

    /// Starts handoffd and waits until its socket answers.
    @discardableResult
    func start(waitUntilReady: Bool = true) async throws -> DaemonProcess {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try TestEnvironment.binary("handoffd"))
        // Outside network namespaces: no mDNS at all, and peers only on loopback.
        p.arguments = ["--name", "test-device", "--socket", socketPath, "--state-dir", stateDirectory, "--log-level", "debug",
                       "--no-discovery", "--peer-listen", "127.0.0.1"] + extraArguments
        p.environment = environment
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
        if waitUntilReady {
            // 30 s: at the start of the whole suite a hundred tests start their daemons at
            // once on two cores, and a start then took more than 10 s here (for the code
            // before issue 41 too); what the tests assert comes after the start.
            try await eventually(timeout: 30, "handoffd to accept connections on \(socketPath)") {
                guard p.isRunning else { throw TestFailure("handoffd exited with \(p.terminationStatus):\n\(self.log())") }
                return UnixSocketProbe.canConnect(socketPath)
            }
        }
        return self
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
