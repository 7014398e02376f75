import HandoffCore
import Logging

/// What this workstation keeps for the account's other members, and the sequence of the
/// last item it issued itself, on disk: `kept-offers.json` in the state directory, each
/// item's bytes in base64. Written whole, atomically, through `StateWriter`. Items are
/// checked again when loaded (`KeptOffers.take`): a file edited by hand can add nothing.
struct KeptOfferStore: Sendable {
    let path: String

    static let fileName = "kept-offers.json"

    init(stateDirectory: String) {
        path = stateDirectory + "/" + Self.fileName
    }

    struct Contents: Sendable {
        var items: [KeptOffer] = []
        /// The highest sequence this device issued (its own offers and withdrawals).
        var issued: UInt64 = 0
        /// Per origin, what is not to be taken again (`KeptOffers.floors`).
        var floors: [DeviceID: UInt64] = [:]
    }

    func load(maximumPayload: Int, logger: Logger) -> Contents {
        do {
            guard let bytes = try AtomicFile.read(path), let doc = try JSONValue(parsing: bytes).objectValue else { return Contents() }
            var out = Contents()
            if case .integer(let n)? = doc["issued"], n > 0 { out.issued = UInt64(n) }
            if case .object(let floors)? = doc["floors"] {
                for (k, v) in floors.pairs {
                    if let id = try? DeviceID(parsing: k), case .integer(let n) = v, n > 0 { out.floors[id] = UInt64(n) }
                }
            }
            guard case .array(let items)? = doc["items"] else { return out }
            for item in items {
                guard let text = item.stringValue, let data = Base64.decode(text) else { continue }
                if let k = try? KeptOffer(decoding: data, maximumPayload: maximumPayload) { out.items.append(k) }
            }
            return out
        } catch {
            let aside = AtomicFile.keepAside(path)
            logger.error("the kept offers could not be read; keeping none until members send theirs again",
                         metadata: ["file": "\(path)", "kept as": "\(aside)", "error": "\(error)"])
            return Contents()
        }
    }

    func save(_ contents: Contents) {
        var floors = JSONObject()
        for (origin, sequence) in contents.floors.sorted(by: { $0.key < $1.key }) { floors[origin.description] = .integer(Int64(clamping: sequence)) }
        let doc: JSONValue = .object([
            "version": .integer(1),
            "issued": .integer(Int64(clamping: contents.issued)),
            "floors": .object(floors),
            "items": .array(contents.items.sorted { $0.origin < $1.origin }.map { .string(Base64.encode($0.encoded)) }),
        ])
        StateWriter.shared.write(doc.serializedBytes(pretty: true) + [UInt8(ascii: "\n")], to: path)
    }
}
