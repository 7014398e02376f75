import HandoffCore
import HandoffControlAPI
import NIOCore

/// The clipboard across the account (Docs/LocalAPI.md §23): the newest copy, copying
/// (an app that serves its own bytes, or bytes handoffd keeps), and pasting.
extension HandoffClient {
    /// The account's newest copy (here or on a linked workstation); nil: none to paste.
    public func clipboard() async throws -> ClipboardRecord? {
        try decode(try await call(.clipboard), ClipboardRecord.newest(json:))
    }

    /// An app copied: announces the formats (never the bytes). `session` serves them:
    /// it hears `clipboard-requested` when a paste elsewhere asks, and answers with
    /// `acceptStream` (writing the bytes) or `refuseStream`.
    public func announceClipboard(_ formats: [ClipboardFormat], session: String) async throws -> ClipboardRecord {
        try decode(try await call(.announceClipboard, body: AnnounceClipboardRequest(formats: formats, session: session).json), ClipboardRecord.init(json:))
    }

    /// Withdraws this workstation's copy (with `id`, only if that is still its copy); the
    /// newest copy afterwards.
    public func withdrawClipboard(id: ClipboardID? = nil) async throws -> ClipboardRecord? {
        try decode(try await call(.withdrawClipboard, body: WithdrawClipboardRequest(id: id).json), ClipboardRecord.newest(json:))
    }

    /// Copies `bytes` in `type`; handoffd keeps them (at most its `clipboard-held-max-bytes`)
    /// and serves pastes itself. `produce` writes the bytes (all at once, or as they come).
    public func copy(type: String, _ produce: (ContinuationStream.Writer) async throws -> Void) async throws -> ClipboardRecord {
        try await StreamConnection.run(socketPath: socketPath, path: ControlEndpoint.copyPath(type: type), headers: []) { stream in
            try await produce(stream.writer)
            try await stream.writer.finish()
            var answer = ByteBuffer()
            while var bytes = try await stream.reader.read() { answer.writeBuffer(&bytes) }
            let json: JSONValue
            do { json = try JSONValue(parsing: Array(answer.readableBytesView)) } catch { throw HandoffClientError.badResponse("the copy's record: \(error)") }
            return try decode(json, ClipboardRecord.init(json:))
        }
    }

    /// Pastes the newest copy in `type` (nil: its first format), only copy `id` if named.
    /// `body` reads the bytes (`stream.info.fields` has `clipboardID` and `type`); with
    /// `into`, handoffd writes them into that file (empty, regular, or /dev/null) itself.
    public func paste<R: Sendable>(type: String? = nil, id: String? = nil, into: String? = nil, _ body: (ContinuationStream) async throws -> R) async throws -> R {
        try await StreamConnection.run(socketPath: socketPath, path: ControlEndpoint.pastePath(type: type, id: id, into: into), headers: []) { stream in
            let result = try await body(stream)
            try await stream.writer.finish()
            return result
        }
    }
}
