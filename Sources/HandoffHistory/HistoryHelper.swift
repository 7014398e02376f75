import HandoffCore
import HandoffControlAPI
import HandoffHistoryProtocol

/// The history helper's whole job, without its I/O: a request line in, a reply line out
/// (HistoryHelperMessage.swift). A line that does not parse gets an error reply, never a
/// crash: the helper's input comes from handoffd, but a bug there must cost one answer,
/// not the history.
public struct HistoryHelper {
    let database: HistoryDatabase

    public init(database: HistoryDatabase) { self.database = database }

    public func answer(_ line: [UInt8]) -> [UInt8] {
        let reply: HistoryHelperReply
        do {
            let json: JSONValue
            do { json = try JSONValue(parsing: line) } catch { throw ValidationError(field: "request", problem: "is not JSON: \(error)") }
            reply = answer(try HistoryHelperRequest(json: json))
        } catch {
            reply = .failed(code: "bad_request", message: "\(error)")
        }
        return reply.json.serializedBytes() + [UInt8(ascii: "\n")]
    }

    public func answer(_ request: HistoryHelperRequest) -> HistoryHelperReply {
        do {
            switch request {
            case .record(let offer, let device, let local, let at):
                database.record(offer, device: device, local: local, at: at)
                return .ok(.bool(true))
            case .search(let query, let at):
                return .ok(HistoryEntry.listJSON(try database.search(query, at: at)))
            case .entry(let id):
                guard let (entry, document) = try database.entry(id) else { return .ok(.null) }
                return .ok(HistoryHelperReply.entryJSON(entry, document: document))
            case .expire(let at):
                return .ok(.integer(Int64(database.expire(at: at))))
            case .clear:
                return .ok(.integer(Int64(try database.clear())))
            case .forget(let device, let ids):
                return .ok(.integer(Int64(try database.forget(device: device, identifiers: ids))))
            case .count:
                return .ok(.integer(Int64(try database.count())))
            }
        } catch {
            return .failed(code: "history_failed", message: "\(error)")
        }
    }
}
