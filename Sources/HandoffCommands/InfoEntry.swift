import HandoffCore
import HandoffSystem

/// `--info KEY=VALUE` (a string) or `--info KEY:=JSON` (any typed-JSON value, as in
/// httpie): `--info page:=12`, `--info 'seen:={"$date":"2026-11-21T10:00:00Z"}'`.
enum InfoEntry {
    static func parse(_ text: String) throws -> (String, PropertyValue) {
        if let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].first == "=",
           !text[..<colon].contains("=") {
            let key = String(text[..<colon])
            let rest = text[text.index(colon, offsetBy: 2)...]
            guard !key.isEmpty else { throw CommandFailure(description: "--info \"\(text)\": the key is empty", status: ExitStatus.usage) }
            let json: JSONValue
            do { json = try JSONValue(parsing: String(rest)) } catch {
                throw CommandFailure(description: "--info \(key):=...: \(error)", status: ExitStatus.usage)
            }
            do { return (key, try TypedJSON.decode(json, path: "userInfo.\(key)")) } catch {
                throw CommandFailure(description: "--info \(key): \(error)", status: ExitStatus.usage)
            }
        }
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw CommandFailure(description: "--info \"\(text)\" must be KEY=VALUE (a string) or KEY:=JSON (a typed value)", status: ExitStatus.usage)
        }
        return (String(text[..<eq]), .string(String(text[text.index(after: eq)...])))
    }

    /// `--info-json FILE|-`: a JSON object in the typed convention.
    static func readObject(_ source: String) throws -> UserInfo {
        let bytes: [UInt8]
        do {
            guard let read = try BoundedFile.read(source) else { throw BoundedFile.Failure(description: "cannot open \(source): no such file") }
            bytes = read
        } catch {
            throw CommandFailure(description: "--info-json: \(error)", status: ExitStatus.usage)
        }
        do {
            guard case .object(let o) = try JSONValue(parsing: bytes) else {
                throw CommandFailure(description: "--info-json: expected a JSON object", status: ExitStatus.usage)
            }
            return try TypedJSON.decode(dictionary: o, path: "userInfo")
        } catch let e as CommandFailure {
            throw e
        } catch {
            throw CommandFailure(description: "--info-json: \(error)", status: ExitStatus.usage)
        }
    }
}
