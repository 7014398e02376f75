import ArgumentParser
import HandoffCore
import HandoffSystem

/// The activity fields shared by become-current and update.
struct ActivityContentOptions: ParsableArguments {
    @Option(help: "A title people see on the other workstation.")
    var title: String?

    @Option(name: .customLong("info"), help: ArgumentHelp("A userInfo entry: KEY=VALUE for a string, KEY:=JSON for any typed value (e.g. page:=12). Repeatable.", valueName: "entry"))
    var info: [String] = []

    @Option(name: .customLong("info-json"), help: ArgumentHelp("userInfo entries from a JSON object in a file, or - for stdin (typed-JSON convention).", valueName: "file"))
    var infoJSON: String?

    @Option(name: .customLong("required-keys"), help: ArgumentHelp("userInfo keys the other side needs, comma-separated.", valueName: "keys"))
    var requiredKeys: String?

    @Option(name: .customLong("searchable-keys"), help: ArgumentHelp("userInfo keys the history may index (with --search), comma-separated.", valueName: "keys"))
    var searchableKeys: String?

    @Option(name: .customLong("webpage-url"), help: ArgumentHelp("An http(s) URL to open where no app handles the type.", valueName: "url"))
    var webpageURL: String?

    @Option(help: ArgumentHelp("Search keywords, comma-separated.", valueName: "words"))
    var keywords: String?

    @Option(help: ArgumentHelp("When it expires: a duration (30s, 10m, 2h, 1d) or an RFC 3339 date.", valueName: "when"))
    var expires: String?

    @Option(name: .customLong("referrer-url"), help: ArgumentHelp("The http(s) page that led here.", valueName: "url"))
    var referrerURL: String?

    @Option(name: .customLong("persistent-id"), help: ArgumentHelp("The app's own lasting name for the content (saved activities can be deleted by it).", valueName: "id"))
    var persistentIdentifier: String?

    @Option(name: .customLong("target-content-id"), help: ArgumentHelp("Which window or document of the app should continue it.", valueName: "id"))
    var targetContentIdentifier: String?

    @Option(name: .customLong("description"), help: ArgumentHelp("What the content is, for search (the history indexes it with --search).", valueName: "text"))
    var contentDescription: String?

    @Option(name: .customLong("display-name"), help: ArgumentHelp("The name to show for the content, for search.", valueName: "name"))
    var displayName: String?

    @Option(help: ArgumentHelp("A small PNG or JPEG file shown beside the activity (at most 32 KiB).", valueName: "file"))
    var thumbnail: String?

    /// The --thumbnail file's bytes.
    func thumbnailBytes() throws -> [UInt8]? {
        guard let thumbnail else { return nil }
        do {
            guard let bytes = try BoundedFile.read(thumbnail, limit: 1 << 20) else {
                throw CommandFailure(description: "cannot read the thumbnail \(thumbnail): no such file", status: ExitStatus.usage)
            }
            return bytes
        } catch let e as BoundedFile.Failure {
            throw CommandFailure(description: "cannot read the thumbnail \(thumbnail): \(e.description)", status: ExitStatus.usage)
        }
    }

    /// The entries of --info-json then --info (later ones win).
    func userInfo() throws -> UserInfo? {
        guard infoJSON != nil || !info.isEmpty else { return nil }
        var result: UserInfo = [:]
        if let infoJSON { result = try InfoEntry.readObject(infoJSON) }
        for entry in info {
            let (k, v) = try InfoEntry.parse(entry)
            result[k] = v
        }
        return result
    }

    static func list(_ text: String?) -> [String]? {
        text.map { $0.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty } }
    }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
