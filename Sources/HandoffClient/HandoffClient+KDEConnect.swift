import HandoffControlAPI
import HandoffCore

extension HandoffClient {
    /// KDE Connect: whether it is on, the endpoint's ports and the devices it knows.
    public func kdeConnect() async throws -> KDEConnectStatus {
        KDEConnectStatus(json: try await call(.kdeConnect))
    }

    /// Turns the KDE Connect endpoint on or off, for good; the status after.
    public func setKDEConnect(enabled: Bool) async throws -> KDEConnectStatus {
        KDEConnectStatus(json: try await call(.setKDEConnect, body: SetKDEConnectRequest(enabled: enabled).json))
    }

    /// Pairs, accepts, rejects or unpairs a KDE Connect device (its id or name), or sends it
    /// an activity; the device after.
    public func kdeConnect(_ device: String, _ request: KDEConnectDeviceRequest) async throws -> KDEConnectDevice {
        KDEConnectDevice(json: try await call(.kdeConnectDevice, Self.segment(device), body: request.json))
    }

    /// Sends an activity (an id, or `current`: the newest of the account's) to a KDE Connect
    /// device: its web page, else its text.
    public func sendToKDEConnect(_ device: String, activity: String = "current") async throws -> KDEConnectSent {
        KDEConnectSent(json: try await call(.kdeConnectDevice, Self.segment(device), body: KDEConnectDeviceRequest(action: .send, activity: activity).json))
    }

    /// A device's id or name as one path segment.
    private static func segment(_ device: String) -> String {
        PercentEncoding.encode(device).split(separator: "/", omittingEmptySubsequences: false).joined(separator: "%2F")
    }
}
