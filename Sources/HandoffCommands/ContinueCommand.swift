import ArgumentParser
import HandoffClient
import HandoffCore
import HandoffSystem
import HandoffControlAPI
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

struct ContinueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue",
        abstract: "Continue here what you were doing on another workstation.",
        discussion: """
            Takes the most recent activity your trusted workstations offer (or the one named), fetches its \
            payload fresh from the origin and checks it; the origin hears that it was continued. Then, in a \
            graphical session (the handoff-session agent runs), it opens the app that handles the activity, \
            or its web page in the browser, and says what it opened; without one it prints the payload. \
            --print only prints; --json prints JSON for scripts; --open insists on opening (it fails if \
            nothing can). With --stream-to or --stream-from it opens a continuation stream to the origin's \
            app instead: --stream-from sends a file (or stdin) to it, --stream-to writes what it sends back. \
            --on PHONE continues it on a KDE Connect device instead (handoffctl kdeconnect): the newest activity, \
            here or on your other workstations, goes to the phone as its web page or its text.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Only from this workstation (its name or device ID).", valueName: "device"))
    var from: String?

    @Option(name: .customLong("type"), help: ArgumentHelp("Only an activity of this type.", valueName: "type"))
    var activityType: String?

    @Option(help: ArgumentHelp("Exactly this activity.", valueName: "id"))
    var id: String?

    @Flag(help: "Open the activity (its app, else its web page), and fail if nothing here can.")
    var open = false

    @Flag(help: "Only print the activity; open nothing.")
    var print = false

    @Option(name: .customLong("stream-to"), help: ArgumentHelp("Open a continuation stream and write what the origin sends to this file (- for stdout).", valueName: "file"))
    var streamTo: String?

    @Option(name: .customLong("stream-from"), help: ArgumentHelp("Open a continuation stream and send this file (- for stdin) to the origin.", valueName: "file"))
    var streamFrom: String?

    @Option(name: .customLong("on"), help: ArgumentHelp("Continue it on this KDE Connect device (a phone; its id or name): it gets the activity's web page, else its text.", valueName: "device"))
    var device: String?

    func validate() throws {
        if device != nil && (open || print || streamTo != nil || streamFrom != nil || from != nil || activityType != nil) {
            throw ValidationError("--on sends the current activity (or the one --id names) to a KDE Connect device: it takes no other option")
        }
        if open && print { throw ValidationError("--open and --print contradict each other: choose one") }
        if open && (streamTo != nil || streamFrom != nil) { throw ValidationError("--open and a continuation stream do not go together: the app that opens it opens its own streams") }
        if streamTo == "-" && options.json { throw ValidationError("--json and --stream-to - both want stdout; write the stream to a file") }
        if streamTo == "-" && streamFrom == "-" { throw ValidationError("--stream-to - and --stream-from - cannot share the terminal; name a file for one") }
    }

    /// Opening is asked for unless the caller wants the payload itself: --print, --json
    /// (scripts; --open overrides) or a stream.
    var launches: Bool {
        open || !(print || options.json || streamTo != nil || streamFrom != nil)
    }

    func run() async throws {
        if let device {
            let sent = try await options.client.sendToKDEConnect(device, activity: id ?? "current")
            if options.json { return Output.out(sent.json.prettySerialized()) }
            return Output.out("sent \(sent.url ?? "its text") to \(sent.device.name)")
        }
        let continued = try await options.client.continueActivity(from: from, type: activityType, id: id, launch: launches)
        // With the stream on stdout, the words for people go to stderr.
        let toStderr = streamTo == "-"
        let say: (String) -> Void = { line in if toStderr { Output.err(line) } else { Output.out(line) } }
        let title = continued.record.activity.title.isEmpty ? continued.record.activity.activityType : "\"\(continued.record.activity.title)\""
        if options.json {
            Output.out(continued.json.prettySerialized())
        } else if case .opened(let app)? = continued.launch {
            say("continued \(title) from \(continued.device.name): \(Self.describe(app))")
            if let note = app.note { say(note) }
        } else if let terminal = continued.terminal {
            // Headless (or no terminal to open): the command that continues it.
            switch terminal {
            case .success(let t):
                say("continued a terminal from \(continued.device.name); run:")
                say(t.commandLine)
                if let note = t.note { say(note) }
            case .failure(let e):
                throw CommandFailure(description: "the terminal \(continued.device.name) offered cannot be continued: \(e)")
            }
        } else {
            say("continued from \(continued.device.name):")
            say(ActivityPrinter.details(continued.record))
        }
        // Headless, a plain `continue` prints and that is all; anything else is a failure.
        // A terminal nothing could open printed its command above: that is the outcome.
        if case .failed(let code, let message)? = continued.launch, code != "no_launcher" || open, continued.terminal == nil || open {
            throw CommandFailure(description: "opened nothing: \(message)")
        }
        if streamTo != nil || streamFrom != nil {
            try await stream(continued.record.activity)
        }
    }

    static func describe(_ app: LaunchedApp) -> String {
        let id = app.appID.map { " (\($0))" } ?? ""
        switch app.route {
        case .handler: return "opened in \(app.appName)\(id)"
        case .terminal: return "opened a terminal (\(app.appName)) running:"
        case .domain: return "opened \(app.uri ?? "its web page") in \(app.appName)\(id), which claims that site"
        case .browser: return "opened \(app.uri ?? "its web page") in \(app.appName)\(id)"
        case .document: return "opened \(app.uri ?? "its document") in \(app.appName)\(id)"
        }
    }

    private func stream(_ activity: Activity) async throws {
        let source = try streamFrom.map(StreamEnds.openSource)
        let sink = try streamTo.map(StreamEnds.openSink)
        defer { if let source, source.fd != 0 { close(source.fd) } }
        do {
            // A file (or /dev/null) is written by handoffd itself: the bytes skip this process.
            let (sent, received) = try await options.client.withStream(toActivity: activity.id.rawValue, into: sink?.daemonWritable) { stream in
                let progress = StreamProgress(total: stream.info.length, enabled: sink != nil && sink?.file.fd != 2 && isatty(2) == 1 && !options.json)
                do {
                    return try await withThrowingTaskGroup(of: Int64.self) { group in
                        group.addTask {
                            var total: Int64 = 0
                            if let source {
                                while true {
                                    let bytes = try await source.read()
                                    if bytes.readableBytes == 0 { break }
                                    try await stream.writer.write(bytes)
                                    total += Int64(bytes.readableBytes)
                                }
                            }
                            try await stream.writer.finish()
                            return total
                        }
                        while let delivery = try await stream.reader.next() {
                            switch delivery {
                            case .bytes(let bytes):
                                if let sink { try await sink.file.write(bytes) }
                                progress.add(bytes.readableBytes)
                            case .written(let total):
                                progress.set(total)
                            }
                        }
                        progress.finish()
                        return (try await group.next() ?? 0, progress.bytes)
                    }
                } catch {
                    progress.abandon()
                    throw error
                }
            }
            try sink?.commit()
            if options.json {
                Output.out(JSONValue.object(["sent": .integer(sent), "received": .integer(received)]).serialized())
            } else if streamTo != "-" {
                Output.out("stream: \(received) bytes received\(streamTo.map { " into \($0)" } ?? ""), \(sent) sent")
            }
        } catch {
            sink?.discard()
            if case HandoffClientError.stream(_, let message) = error {
                throw CommandFailure(description: "the continuation stream failed: \(message)")
            }
            throw error
        }
    }
}

/// Where `continue` reads and writes stream bytes.
enum StreamEnds {
    static func openSource(_ path: String) throws -> BlockingFile {
        if path == "-" { return BlockingFile(fd: 0, name: "stdin") }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(description: "--stream-from \(path): \(String(cString: strerror(errno)))", status: ExitStatus.usage) }
        return BlockingFile(fd: fd, name: path)
    }

    /// A file is written under a temporary name beside it and renamed when the stream
    /// ended cleanly, so a failed stream never leaves a truncated file that looks whole.
    final class Sink: Sendable {
        let file: BlockingFile
        let temporary: String?
        let path: String
        /// The absolute path handoffd may write into for us: the temporary file, or
        /// /dev/null; nil for stdout, pipes and other devices, which get the bytes from here.
        let daemonWritable: String?

        init(file: BlockingFile, temporary: String?, path: String, daemonWritable: String? = nil) {
            self.file = file
            self.temporary = temporary
            self.path = path
            self.daemonWritable = daemonWritable
        }

        func commit() throws {
            guard let temporary else { return }
            defer { close(file.fd) }
            guard fsync(file.fd) == 0, rename(temporary, path) == 0 else {
                let why = String(cString: strerror(errno))
                unlink(temporary)
                throw CommandFailure(description: "could not save \(path): \(why)")
            }
        }

        func discard() {
            guard let temporary else { return }
            close(file.fd)
            unlink(temporary)
        }
    }

    static func openSink(_ path: String) throws -> Sink {
        if path == "-" { return Sink(file: BlockingFile(fd: 1, name: "stdout"), temporary: nil, path: path) }
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            // A device or pipe (/dev/null, a FIFO): write to it directly.
            let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw CommandFailure(description: "--stream-to \(path): \(String(cString: strerror(errno)))", status: ExitStatus.usage) }
            return Sink(file: BlockingFile(fd: fd, name: path), temporary: nil, path: path, daemonWritable: DevNull.matches(st) ? "/dev/null" : nil)
        }
        var template = Array((path + ".handoff-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw CommandFailure(description: "--stream-to \(path): \(String(cString: strerror(errno)))", status: ExitStatus.usage) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        fchmod(fd, 0o666 & ~currentUmask())  // what a plain create would give, not mkstemp's 0600
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Sink(file: BlockingFile(fd: fd, name: path), temporary: temporary, path: path, daemonWritable: absolute(temporary))
    }

    private static func absolute(_ path: String) -> String? {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return nil }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    private static func currentUmask() -> mode_t {
        let m = umask(0o022)
        umask(m)
        return m
    }
}
