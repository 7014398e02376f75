import HandoffDaemon
import HandoffJournal
import HandoffCore
import HandoffSystem
import HandoffControlAPI
import Logging
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// handoffd: the per-user Handoff daemon. All behaviour lives in HandoffDaemon; its
/// settings, flags and help come from one table (`DaemonOption`).
struct Handoffd {
    let commandLine: DaemonCommandLine

    /// The exit status: 0 after a graceful stop, 1 when the daemon failed, 64 for bad
    /// settings (said on standard error). The main thread exits with it.
    func run() async -> Int32 {
        var cfg = DaemonConfiguration()
        do {
            let path = commandLine.configFile ?? DefaultPaths.configFile
            if let text = try readConfig(path, required: commandLine.configFile != nil) { try cfg.apply(configFile: text, path: path) }
            for s in commandLine.settings { try cfg.set(s.name, s.value) }
        } catch {
            Self.write(2, "handoffd: \(error)\n")
            return 64
        }
        let level = cfg.logLevel
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level) }
        let logger = Logger(label: "handoffd")
        do {
            try await Daemon(configuration: cfg, logger: logger).run()
            return 0
        } catch let e as ControlListener.AlreadyRunning {
            logger.error("\(e.description)")
            return 1
        } catch {
            logger.critical("handoffd failed: \(error)")
            return 1
        }
    }

    private func readConfig(_ path: String, required: Bool) throws -> String? {
        guard let bytes = try BoundedFile.read(path, limit: 1 << 20) else {
            if required { throw DaemonConfiguration.FileError(description: "cannot read config file \(path): it does not exist") }
            return nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func write(_ fd: CInt, _ text: String) {
        var text = text
        text.withUTF8 { _ = try? writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// A usage error: what is wrong, on standard error, and exit status 64 (EX_USAGE).
    static func fail(_ message: String) -> Never {
        write(2, "handoffd: \(message)\n")
        exit(64)
    }

    static func say(_ text: String) -> Never {
        write(1, text)
        exit(0)
    }
}

extension Handoffd {
    /// Parses the options, runs the daemon as a task and waits for it on the main thread.
    /// Not top-level `await`: Swift's async main ends the main thread (dispatch_main, then
    /// pthread_exit) as soon as the daemon first waits, and that exit unwinds the thread
    /// through the binary's unwind tables, whose pages then stay resident for the whole
    /// session (about 0.8 MB; Docs/Performance.md, "Idle memory"). A thread blocked here
    /// costs nothing and never wakes up.
    static func runUntilStopped(_ arguments: [String]) -> Never {
        let commandLine: DaemonCommandLine
        do { commandLine = try DaemonCommandLine.parse(arguments) } catch { fail(error.description) }
        switch commandLine.request {
        case .help: say(DaemonCommandLine.help())
        case .version: say(APIVersion.software + "\n")
        case .dumpHelp: say(DaemonCommandLine.toolInfo().serialized() + "\n")
        case .run: break
        }
        let daemon = Handoffd(commandLine: commandLine)
        let finished = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Int32.self)
        finished.completeWithTask { await daemon.run() }
        do { exit(try finished.futureResult.wait()) } catch { fail("\(error)") }
    }
}
