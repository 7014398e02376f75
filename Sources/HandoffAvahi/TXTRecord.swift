import CAvahi
import Logging

/// Conversion between TXT pairs and AvahiStringList (the variadic Avahi helpers are unusable
/// from Swift, so lists are built with avahi_string_list_add_pair).
enum TXTRecord {
    /// Caller frees the result with avahi_string_list_free. nil is a valid (empty) list.
    static func makeList(_ pairs: [(key: String, value: String)], logger: Logger) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for (key, value) in pairs {
            // Avahi would silently truncate entries over 255 bytes; a cut value is worse than none.
            guard !key.isEmpty, !key.contains("="), key.utf8.count + 1 + value.utf8.count <= 255 else {
                logger.warning("skipping invalid TXT entry", metadata: ["key": "\(key)"])
                continue
            }
            // Prepends, but Avahi serializes in insertion order.
            list = avahi_string_list_add_pair(list, key, value)
        }
        return list
    }

    static func dictionary(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [String: String] {
        var result: [String: String] = [:]
        var node = list
        while let entry = node {
            var key: UnsafeMutablePointer<CChar>? = nil
            var value: UnsafeMutablePointer<CChar>? = nil
            var size = 0
            if avahi_string_list_get_pair(entry, &key, &value, &size) == 0, let key {
                let k = String(cString: key)
                let v = value.map {
                    String(decoding: UnsafeRawBufferPointer(start: $0, count: size), as: UTF8.self)
                } ?? ""
                if result[k] == nil { result[k] = v }
                avahi_free(key)
                avahi_free(value)
            }
            node = entry.pointee.next
        }
        return result
    }
}
