/// Why something a KDE Connect peer sent was refused: said in the log, never to the peer.
public struct KDEConnectError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
