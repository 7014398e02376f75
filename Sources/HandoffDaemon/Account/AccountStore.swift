import HandoffCore
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The account's statements on disk: `account.json` in the state directory, each
/// statement's bytes in base64, in the order they were taken. Written whole, atomically.
public struct AccountStore: Sendable {
    let path: String
    let stateDirectory: String
    /// The shared advertisement key lives beside the statements.
    let keys: AdvertisementKeyStore

    static let fileName = "account.json"

    public init(stateDirectory: String) {
        path = stateDirectory + "/" + Self.fileName
        self.stateDirectory = stateDirectory
        keys = AdvertisementKeyStore(stateDirectory: stateDirectory)
    }

    func load(logger: Logger) -> [AccountStatement] {
        do {
            guard let bytes = try AtomicFile.read(path) else { return [] }
            guard case .array(let items)? = try JSONValue(parsing: bytes).objectValue?["statements"] else { return [] }
            var out: [AccountStatement] = []
            for item in items {
                guard let text = item.stringValue, let data = Base64.decode(text) else { continue }
                if let s = try? AccountStatement(decoding: data) { out.append(s) }
            }
            return out
        } catch {
            // Kept for the user (not overwritten by the next save); say so loudly.
            let aside = AtomicFile.keepAside(path)
            logger.error("the account of devices could not be read; starting from this device alone", metadata: ["file": "\(path)", "kept as": "\(aside)", "error": "\(error)"])
            return []
        }
    }

    func save(_ statements: [AccountStatement]) {
        let doc: JSONValue = .object(["version": .integer(1), "statements": .array(statements.map { .string(Base64.encode($0.encoded)) })])
        StateWriter.shared.write(doc.serializedBytes(pretty: true) + [UInt8(ascii: "\n")], to: path)
    }
}
