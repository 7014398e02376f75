import ArgumentParser
import HandoffClient
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

struct BecomeCurrentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "become-current",
        abstract: "Make a new activity this workstation's current one; prints its id.",
        discussion: """
            Without --attach the activity belongs to handoffd and lives until it is replaced, resigned, \
            invalidated or expires. With --attach this command stays connected as the activity's owner: the \
            activity ends when the command ends (Ctrl-C), and with --refresh-with it answers will-save by \
            running CMD and taking its stdout (a JSON object) as the new userInfo.
            """)

    @OptionGroup var options: ClientOptions

    @Option(name: .customLong("type"), help: ArgumentHelp("The activity type, reverse-DNS (com.example.editor.edit-note).", valueName: "type"))
    var activityType: String

    @OptionGroup var content: ActivityContentOptions

    @Flag(help: "Make it eligible for search on this user's devices.")
    var search = false

    @Flag(help: "Make it eligible for prediction (the system may suggest it again).")
    var prediction = false

    @Flag(name: .customLong("public-index"), help: "Make it eligible for public indexing.")
    var publicIndex = false

    @Flag(name: .customLong("no-handoff"), help: "Do not offer it to other workstations.")
    var noHandoff = false

    @Flag(help: "The origin serves continuation streams.")
    var streams = false

    @Flag(name: .customLong("needs-save"), help: "Mark the payload stale: the owner is asked to refresh it before it is sent.")
    var needsSave = false

    @Flag(help: "Stay connected as the activity's owner; it ends when this command ends.")
    var attach = false

    @Option(name: .customLong("refresh-with"), help: ArgumentHelp("With --attach: a shell command whose stdout (a JSON object) becomes userInfo on will-save.", valueName: "cmd"))
    var refreshWith: String?

    @Option(name: .customLong("stream-exec"), help: ArgumentHelp("With --attach: serve continuation streams by running this shell command for each, its stdin and stdout wired to the stream.", valueName: "cmd"))
    var streamExec: String?

    @Option(name: .customLong("stream-file"), help: ArgumentHelp("Without --attach: handoffd serves this file as the activity's continuation streams, reading it when a stream opens.", valueName: "path"))
    var streamFile: String?

    @Option(help: ArgumentHelp("The document the activity is about: the other workstation opens its own copy in the same synced folder (Syncthing, Nextcloud, synced-root), or fetches one.", valueName: "path"))
    var document: String?

    @Option(name: .customLong("to"), help: ArgumentHelp("Offer it to this workstation only (its name or device ID; repeatable, at most 16): the others neither list nor keep it.", valueName: "device"))
    var to: [String] = []

    func validate() throws {
        if to.count > 16 { throw ValidationError("--to names at most 16 workstations") }
        if refreshWith != nil && !attach { throw ValidationError("--refresh-with needs --attach: only an attached owner can answer will-save") }
        if streamExec != nil && !attach { throw ValidationError("--stream-exec needs --attach: the command runs here, in this handoffctl") }
        if streamFile != nil && attach { throw ValidationError("--stream-file is for activities without --attach; an attached owner serves streams with --stream-exec") }
        if streams && !attach && streamFile == nil {
            throw ValidationError("--streams needs a source: --stream-file PATH, or --attach with --stream-exec CMD")
        }
    }

    func run() async throws {
        var draft = ActivityDraft(activityType: activityType)
        draft.title = content.title ?? ""
        draft.userInfo = try content.userInfo() ?? [:]
        draft.requiredUserInfoKeys = ActivityContentOptions.list(content.requiredKeys) ?? []
        draft.searchableUserInfoKeys = ActivityContentOptions.list(content.searchableKeys) ?? []
        draft.webpageURL = content.webpageURL
        draft.keywords = ActivityContentOptions.list(content.keywords) ?? []
        if let e = content.expires { draft.expirationDate = try ExpiryArgument.parse(e, now: SystemClock.now()) }
        draft.referrerURL = content.referrerURL
        draft.persistentIdentifier = content.persistentIdentifier
        draft.targetContentIdentifier = content.targetContentIdentifier
        draft.eligibleForPrediction = prediction
        draft.contentDescription = content.contentDescription
        draft.displayName = content.displayName
        draft.thumbnail = try content.thumbnailBytes()
        draft.eligibleForSearch = search
        draft.eligibleForPublicIndexing = publicIndex
        draft.eligibleForHandoff = !noHandoff
        draft.supportsContinuationStreams = streams || streamExec != nil || streamFile != nil
        draft.needsSave = needsSave

        let client = options.client
        guard attach else {
            let record = try await client.becomeCurrent(draft, streamFile: try streamFile.map { try BecomeCurrentCommand.absolute($0, "--stream-file") },
                                                        document: try document.map { try BecomeCurrentCommand.absolute($0, "--document") },
                                                        to: to.isEmpty ? nil : to)
            Output.out(options.json ? record.json.prettySerialized() : record.activity.id.rawValue)
            for w in record.warnings { Output.err("handoffctl: note: \(w)") }
            return
        }
        try await client.withSession { session in
            let record = try await client.becomeCurrent(draft, session: session.token,
                                                        document: try document.map { try BecomeCurrentCommand.absolute($0, "--document") },
                                                        to: to.isEmpty ? nil : to)
            Output.out(options.json ? record.json.serialized() : record.activity.id.rawValue)
            for w in record.warnings { Output.err("handoffctl: note: \(w)") }
            try await AttachedOwner(client: client, session: session, activityID: record.activity.id,
                                    refreshCommand: refreshWith, streamCommand: streamExec, json: options.json).run()
        }
    }

    /// handoffd's working directory is not ours: name the file absolutely.
    static func absolute(_ path: String, _ option: String) throws -> String {
        guard let resolved = realpath(path, nil) else {
            throw CommandFailure(description: "\(option) \(path): \(String(cString: strerror(errno)))", status: ExitStatus.usage)
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
