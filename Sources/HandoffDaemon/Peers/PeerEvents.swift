import HandoffControlAPI

/// Peer events for the control API (offers, peers, copies), from the link layer and the
/// services beside it, broadcast by one task in the order they happened. A task per event
/// could deliver a link's `peer-disconnected` after the `peer-connected` of the link
/// replacing it, and a client would then think the peer gone for good (bench-scale: "w14
/// lacks 1 after 60 s" while GET /v1/peers listed it).
struct PeerEvents: Sendable {
    let stream: AsyncStream<ControlEvent>
    let continuation: AsyncStream<ControlEvent>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream(of: ControlEvent.self) }
}
