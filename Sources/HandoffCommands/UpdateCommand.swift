import ArgumentParser
import HandoffCore
import HandoffControlAPI

struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change an activity (the current one unless ID is given).",
        discussion: "userInfo entries are merged into the existing ones (addUserInfoEntries) unless --replace is given.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The activity's id (default: the current activity).")
    var id: String = "current"

    @OptionGroup var content: ActivityContentOptions

    @Flag(help: "Replace userInfo with the given entries instead of merging them in.")
    var replace = false

    @Option(name: .customLong("remove-key"), help: ArgumentHelp("Remove a userInfo key. Repeatable.", valueName: "key"))
    var removeKeys: [String] = []

    @Flag(name: .customLong("no-webpage-url"), help: "Remove the webpage URL.")
    var noWebpageURL = false

    @Flag(name: .customLong("no-expiry"), help: "Remove the expiration date.")
    var noExpiry = false

    @Flag(inversion: .prefixedNo, help: "Mark the payload stale (or fresh).")
    var needsSave: Bool?

    @Flag(inversion: .prefixedNo, help: "Offer it to other workstations (or not).")
    var handoff: Bool?

    @Flag(inversion: .prefixedNo, help: "Eligible for search (or not).")
    var search: Bool?

    @Flag(inversion: .prefixedNo, help: "The origin serves continuation streams (or not).")
    var streams: Bool?

    @Flag(inversion: .prefixedNo, help: "Eligible for prediction (or not).")
    var prediction: Bool?

    @Option(name: .customLong("clear"), help: ArgumentHelp("Remove an optional field: referrer-url, persistent-id, target-content-id, description, display-name or thumbnail. Repeatable.", valueName: "field"))
    var clear: [ClearableField] = []

    enum ClearableField: String, ExpressibleByArgument, CaseIterable {
        case referrerURL = "referrer-url", persistentID = "persistent-id", targetContentID = "target-content-id"
        case description, displayName = "display-name", thumbnail
    }

    func validate() throws {
        if noWebpageURL && content.webpageURL != nil { throw ValidationError("--webpage-url and --no-webpage-url contradict each other") }
        if noExpiry && content.expires != nil { throw ValidationError("--expires and --no-expiry contradict each other") }
        let given: [ClearableField: Bool] = [
            .referrerURL: content.referrerURL != nil, .persistentID: content.persistentIdentifier != nil,
            .targetContentID: content.targetContentIdentifier != nil, .description: content.contentDescription != nil,
            .displayName: content.displayName != nil, .thumbnail: content.thumbnail != nil,
        ]
        for field in clear where given[field] == true {
            throw ValidationError("--\(field.rawValue) and --clear \(field.rawValue) contradict each other")
        }
    }

    func run() async throws {
        var u = ActivityUpdate()
        u.title = content.title
        u.userInfo = try content.userInfo()
        u.userInfoMode = replace ? .replace : .merge
        u.removeUserInfoKeys = removeKeys
        u.requiredUserInfoKeys = ActivityContentOptions.list(content.requiredKeys)
        u.searchableUserInfoKeys = ActivityContentOptions.list(content.searchableKeys)
        if let w = content.webpageURL { u.webpageURL = .some(w) }
        if noWebpageURL { u.webpageURL = .some(nil) }
        if let e = content.expires { u.expirationDate = .some(try ExpiryArgument.parse(e, now: SystemClock.now())) }
        if noExpiry { u.expirationDate = .some(nil) }
        u.keywords = ActivityContentOptions.list(content.keywords)
        u.needsSave = needsSave
        u.eligibleForHandoff = handoff
        u.eligibleForSearch = search
        u.supportsContinuationStreams = streams
        u.eligibleForPrediction = prediction
        if let v = content.referrerURL { u.referrerURL = .some(v) }
        if let v = content.persistentIdentifier { u.persistentIdentifier = .some(v) }
        if let v = content.targetContentIdentifier { u.targetContentIdentifier = .some(v) }
        if let v = content.contentDescription { u.contentDescription = .some(v) }
        if let v = content.displayName { u.displayName = .some(v) }
        if let v = try content.thumbnailBytes() { u.thumbnail = .some(v) }
        for field in clear {
            switch field {
            case .referrerURL: u.referrerURL = .some(nil)
            case .persistentID: u.persistentIdentifier = .some(nil)
            case .targetContentID: u.targetContentIdentifier = .some(nil)
            case .description: u.contentDescription = .some(nil)
            case .displayName: u.displayName = .some(nil)
            case .thumbnail: u.thumbnail = .some(nil)
            }
        }
        let record = try await options.client.update(id, u)
        Output.out(options.json ? record.json.prettySerialized() : ActivityPrinter.summary(record))
        for w in record.warnings { Output.err("handoffctl: note: \(w)") }
    }
}
