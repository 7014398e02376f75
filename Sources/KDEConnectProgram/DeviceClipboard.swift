import HandoffClient
import HandoffControlAPI
import HandoffCore
import HandoffKDEConnect
import NIOCore

/// The clipboard with KDE Connect devices, which send the content itself, not an
/// announcement: a paired device's `kdeconnect.clipboard` (and the `.connect` one it sends
/// when it links, if newer than the account's newest copy) becomes a copy here, as text,
/// kept by handoffd; the account's newest copy goes, as text, to the paired devices the user
/// turned that on for. What the desktop marks secret never reaches handoffd, so never a device.
enum DeviceClipboard {
    static let textType = "text/plain;charset=utf-8"
    /// Clipboard text either way is at most this long (a packet from a paired device is at
    /// most 4 MiB; KDE Connect is for text here, not files).
    static let limit = 1 << 20

    /// The text a clipboard packet carries, if it should become the account's copy.
    static func text(of packet: KDEConnectPacket, newestCopy: Timestamp?) -> String? {
        guard let content = packet.body["content"]?.stringValue, !content.isEmpty, content.utf8.count <= limit else { return nil }
        if packet.type == "kdeconnect.clipboard.connect" {
            // What the device held when it linked: only if it is newer than what we have.
            guard case .integer(let ms)? = packet.body["timestamp"], ms > 0 else { return nil }
            if let newestCopy, ms <= newestCopy.seconds &* 1000 &+ Int64(newestCopy.nanoseconds / 1_000_000) { return nil }
        }
        return content
    }

    /// The packet that gives a device our copy.
    static func packet(_ text: String) -> KDEConnectPacket {
        KDEConnectPacket(type: "kdeconnect.clipboard", body: ["content": .string(text)])
    }

    /// The format of `record` to paste as text, if it has one.
    static func textFormat(of record: ClipboardRecord) -> String? {
        record.formats.first { $0.type.lowercased().hasPrefix("text/plain") && ($0.size ?? 0) <= Int64(limit) }?.type
    }

    static func copy(_ text: String, through handoff: HandoffClient) async throws {
        _ = try await handoff.copy(type: textType) { writer in try await writer.write(Array(text.utf8)) }
    }

    static func paste(_ id: ClipboardID, type: String, through handoff: HandoffClient) async throws -> String? {
        try await handoff.paste(type: type, id: id.rawValue) { stream in
            var bytes = ByteBuffer()
            while var more = try await stream.reader.read() {
                guard bytes.readableBytes + more.readableBytes <= limit else { return nil }
                bytes.writeBuffer(&more)
            }
            return String(validating: bytes.readableBytesView, as: UTF8.self)
        }
    }
}
