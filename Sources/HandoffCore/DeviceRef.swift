/// The workstation an activity comes from, as people and peers see it.
public struct DeviceRef: Sendable, Hashable {
    /// The device's human name (handoffd's `--name`, the host name by default).
    public var name: String
    /// The device ID derived from its certificate, once the device has an identity.
    public var id: String?

    public init(name: String, id: String? = nil) {
        self.name = name
        self.id = id
    }
}
