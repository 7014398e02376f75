#if canImport(Glibc)
import Glibc
#endif

/// This machine's host name, as gethostname(2) gives it; nil when it cannot be read or is empty.
public enum HostName {
    public static var current: String? {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return nil }
        let name = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}
