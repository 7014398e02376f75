import HandoffCore
import HandoffKDEConnect
import HandoffSystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The endpoint's own state directory (handoffd's state directory's `kdeconnect/`):
/// - `identity.json`: its KDE Connect device id, certificate and key, made on first start
///   (a KDE Connect id is not handoff's device ID: phones see only this one);
/// - `devices.json`: the paired devices, each with the certificate it paired with.
/// Both are written whole (a temporary file, fsync, rename), mode 0600.
struct EndpointFiles {
    let directory: String

    struct Identity {
        let deviceID: KDEConnectDeviceID
        let certificatePEM: String
        let privateKeyPEM: String
    }

    struct PairedDevice: Equatable {
        var id: KDEConnectDeviceID
        var name: String
        var type: KDEConnectIdentity.DeviceType
        /// The version it last linked with: it may not come back older (CVE-2025-66270).
        var protocolVersion: Int
        var certificate: [UInt8]
        /// This workstation's copies go to it (the user turned it on for this device).
        var sendClipboard = false
    }

    func loadIdentity() throws -> Identity {
        let path = directory + "/identity.json"
        if let bytes = try BoundedFile.read(path, limit: 64 << 10) {
            let o = try JSONValue(parsing: bytes).objectValue ?? [:]
            guard let text = o["deviceID"]?.stringValue, let id = KDEConnectDeviceID(text),
                  let certificate = o["certificate"]?.stringValue, let key = o["privateKey"]?.stringValue else {
                throw KDEConnectError("\(path) is damaged: move it away to make a new KDE Connect identity (devices paired with it must pair again)")
            }
            return Identity(deviceID: id, certificatePEM: certificate, privateKeyPEM: key)
        }
        let id = KDEConnectDeviceID.random()
        let made = try KDEConnectCertificate.make(for: id, now: Date())
        let identity = Identity(deviceID: id, certificatePEM: made.certificatePEM, privateKeyPEM: made.privateKeyPEM)
        let json: JSONValue = .object(["deviceID": .string(id.rawValue), "certificate": .string(made.certificatePEM), "privateKey": .string(made.privateKeyPEM)])
        try save(json, to: path)
        return identity
    }

    func loadDevices() throws -> [PairedDevice] {
        let path = directory + "/devices.json"
        guard let bytes = try BoundedFile.read(path, limit: 16 << 20) else { return [] }
        guard case .array(let items)? = try JSONValue(parsing: bytes).objectValue?["devices"] else {
            throw KDEConnectError("\(path) is damaged: move it away (the devices paired must pair again)")
        }
        return items.compactMap { item in
            guard let o = item.objectValue, let text = o["id"]?.stringValue, let id = KDEConnectDeviceID(text),
                  let certificate = o["certificate"]?.stringValue.flatMap(Base64.decode), case .integer(let version)? = o["protocolVersion"] else { return nil }
            return PairedDevice(id: id, name: o["name"]?.stringValue ?? text, type: KDEConnectIdentity.DeviceType(rawValue: o["type"]?.stringValue ?? "") ?? .unknown,
                                protocolVersion: Int(clamping: version), certificate: certificate, sendClipboard: o["sendClipboard"] == .bool(true))
        }
    }

    func saveDevices(_ devices: [PairedDevice]) throws {
        let list: [JSONValue] = devices.sorted { $0.id < $1.id }.map {
            .object(["id": .string($0.id.rawValue), "name": .string($0.name), "type": .string($0.type.rawValue),
                     "protocolVersion": .integer(Int64($0.protocolVersion)), "certificate": .string(Base64.encode($0.certificate)),
                     "sendClipboard": .bool($0.sendClipboard)])
        }
        try save(.object(["devices": .array(list)]), to: directory + "/devices.json")
    }

    private func save(_ json: JSONValue, to path: String) throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw KDEConnectError("cannot make \(directory): \(String(cString: strerror(errno)))") }
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KDEConnectError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = json.serializedBytes() + [UInt8(ascii: "\n")]
        do {
            try bytes.withUnsafeBytes { try writeAll(fd, $0) }
        } catch {
            close(fd)
            throw KDEConnectError("cannot write \(temporary): \(error)")
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else { throw KDEConnectError("cannot save \(path): \(String(cString: strerror(errno)))") }
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
    }
}
