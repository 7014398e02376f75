import FoundationEssentials
import HandoffClient
import HandoffCore
import HandoffDesktop
import HandoffSystem
import NIOCore
import NIOPosix

// The browser extension's native-messaging host: the browser starts it and talks to it on
// stdin/stdout (Docs/Desktop.md). The focused tab becomes a browsing-web activity owned
// by this host's event session, so it ends when the browser closes.
// `handoff-browser-host --install [--chromium-extension-id ID]` writes the host manifests in
// the user's folders; `--manifest BROWSER --path HOST_PATH` prints one for a package.

let hostName = BrowserExtension.nativeHostName

func log(_ s: String) { _ = try? Array(("handoff-browser-host: " + s + "\n").utf8).withUnsafeBytes { try writeAll(2, $0) } }

/// Frames for the browser; nothing else ever goes to stdout.
func send(_ object: JSONValue) {
    guard let frame = NativeMessageDecoder.encode(object.serialized()) else { return }
    // Whole frames or nothing more: a browser that went away ends the host anyway.
    _ = try? frame.withUnsafeBytes { try writeAll(1, $0) }
}

struct InstallError: Error, CustomStringConvertible { let description: String }

/// The Chromium extension ID that `--chromium-extension-id` names, else the shipped one's.
func chromiumID(_ arguments: [String]) throws -> String {
    var id = BrowserExtension.chromiumID
    if let i = arguments.firstIndex(of: "--chromium-extension-id"), i + 1 < arguments.count { id = arguments[i + 1] }
    guard id.count == 32, id.allSatisfy({ ("a"..."p").contains($0) }) else {
        throw InstallError(description: "\(id) is not a Chromium extension ID (32 letters a to p, as chrome://extensions shows)")
    }
    return id
}

func install(_ arguments: [String]) throws {
    // The path it was started by, not the file it links to: the one executable is every
    // program, and only this name makes it the host when a browser starts it.
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    guard me.hasSuffix("/" + "handoff-browser-host") else {
        throw InstallError(description: "run --install as handoff-browser-host (\(me) is not): browsers start the path it writes")
    }
    let id = try chromiumID(arguments)
    for (browser, dir) in BrowserExtension.manifestFolders() {
        let manifest = BrowserExtension.hostManifest(for: browser, hostPath: me, chromiumID: id)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/" + hostName + ".json"
        try (manifest.prettySerialized() + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        print("installed \(path)")
    }
}

/// `--manifest firefox|chromium|chrome --path HOST`: the manifest for a package to install in
/// the browser's system folder (scripts/package).
func printManifest(_ arguments: [String]) throws {
    guard let i = arguments.firstIndex(of: "--manifest"), i + 1 < arguments.count,
          let browser = BrowserExtension.Browser.allCases.first(where: { $0.rawValue.lowercased() == arguments[i + 1] }) else {
        throw InstallError(description: "usage: handoff-browser-host --manifest firefox|chromium|chrome --path HOST_PATH [--chromium-extension-id ID]")
    }
    guard let p = arguments.firstIndex(of: "--path"), p + 1 < arguments.count, arguments[p + 1].hasPrefix("/") else {
        throw InstallError(description: "--manifest needs --path with the host's absolute path where it will be installed")
    }
    print(BrowserExtension.hostManifest(for: browser, hostPath: arguments[p + 1], chromiumID: try chromiumID(arguments)).prettySerialized())
}

/// The user's settings, read again with each tab: `browser = no` and `never-offer-domains`
/// take effect at the next tab without a restart.
func loadSettings() -> SessionConfiguration {
    (try? SessionConfiguration.load(from: DefaultPaths.sessionConfigFile)) ?? SessionConfiguration()
}

func serve() async -> Int32 {
    let client = HandoffClient()
    let session: EventSession
    do { session = try await client.openSession() } catch {
        send(.object(["type": .string("error"), "message": .string("\(error)")]))
        log("\(error)")
        return 1
    }
    // stdin on a thread of its own: blocking reads, frames handed over as they complete.
    let (messages, sink) = AsyncThrowingStream.makeStream(of: String.self)
    DetachedThread.start {
        var decoder = NativeMessageDecoder()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(0, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                do { try decoder.finish(); sink.finish() } catch { sink.finish(throwing: error) }
                return
            }
            do { for m in try decoder.feed(buffer[0..<n]) { sink.yield(m) } } catch {
                sink.finish(throwing: error)
                return
            }
        }
    }
    var current: (id: String, url: String)?
    do {
        for try await text in messages {
            guard let tab = BrowserTab(json: text) else {
                send(.object(["type": .string("error"), "message": .string("expected {\"type\": \"tab\", \"url\", \"title\", \"incognito\"}")]))
                continue
            }
            let settings = loadSettings()
            let offer = settings.browser && tab.offerable(never: settings.neverOfferDomains)
            do {
                if offer, let c = current, c.url == tab.url {
                    var update = ActivityUpdate()
                    update.title = tab.draft.title
                    _ = try await client.update(c.id, update)
                } else if offer {
                    let record = try await client.becomeCurrent(tab.draft, session: session.token)
                    if let c = current { _ = try? await client.invalidate(c.id) }
                    current = (record.activity.id.rawValue, tab.url)
                } else if let c = current {
                    // A private window, a non-web page, a listed domain, or the source
                    // turned off: stop offering.
                    _ = try? await client.invalidate(c.id)
                    current = nil
                }
                send(.object(["type": .string("ack"), "offered": .bool(offer)]))
            } catch {
                send(.object(["type": .string("error"), "message": .string("\(error)")]))
            }
        }
    } catch {
        send(.object(["type": .string("error"), "message": .string("\(error)")]))
        log("\(error); exiting")
        session.close()
        return 1
    }
    session.close()
    return 0
}

/// handoff-browser-host, as the one executable starts it when it is called by that name.
public enum BrowserHostProgram {
    /// Before any task runs (the one executable's main calls it, then runs `run`).
    public static func prepare() {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        signal(SIGPIPE, SIG_IGN)
    }

    public static func run(_ arguments: [String]) async -> Never {
        if arguments.first == "--install" || arguments.first == "--manifest" {
            do { try arguments.first == "--install" ? install(arguments) : printManifest(arguments) } catch {
                log("\(error)")
                exit(1)
            }
            exit(0)
        }
        exit(await serve())
    }
}
