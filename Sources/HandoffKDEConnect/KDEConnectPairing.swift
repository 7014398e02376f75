import HandoffCore

/// Pairing with one KDE Connect device, as kdeconnect-kde's PairingHandler does it, as a
/// value: events from the link (only what came inside TLS: a UDP packet never reaches
/// here, CVE-2025-32899) and from the user go in, actions come out; the time is given.
///
/// `kdeconnect.pair {"pair": true}` asks, and the same answers yes; `{"pair": false}`
/// refuses, cancels or unpairs. From protocol 8 a request carries its time in seconds
/// (`timestamp`), refused if missing or more than 30 minutes off, and mixed into the
/// verification key. A request not answered within 30 s is cancelled.
public struct KDEConnectPairing: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case notPaired
        /// We asked, at this time (v8: the timestamp sent); the answer is due by `deadline`.
        case requested(timestamp: Int64, deadline: Timestamp)
        /// They asked (v8: their timestamp); the user's answer is due by `deadline`.
        case requestedByPeer(timestamp: Int64?, deadline: Timestamp)
        case paired
    }

    public enum Action: Sendable, Equatable {
        /// Send `kdeconnect.pair` with these values.
        case send(pair: Bool, timestamp: Int64?)
        /// Ask the user, showing the verification key made with this timestamp (v8).
        case askUser(timestamp: Int64?)
        /// Trust the device's certificate from now on.
        case paired
        /// Forget its certificate: it is a stranger again.
        case unpaired
        /// Tell the user why pairing did not happen.
        case failed(String)
    }

    public private(set) var state: State
    /// The device's protocol version on this link.
    public var protocolVersion: Int

    public init(paired: Bool, protocolVersion: Int) {
        state = paired ? .paired : .notPaired
        self.protocolVersion = protocolVersion
    }

    /// The timestamp the verification key is made with, while a request is pending.
    public var timestamp: Int64? {
        switch state {
        case .requested(let t, _): protocolVersion >= 8 ? t : nil
        case .requestedByPeer(let t, _): t
        default: nil
        }
    }

    public var deadline: Timestamp? {
        switch state {
        case .requested(_, let d), .requestedByPeer(_, let d): d
        default: nil
        }
    }

    // MARK: - From the peer

    /// A `kdeconnect.pair` packet arrived on the link.
    public mutating func received(_ packet: KDEConnectPacket, at now: Timestamp) -> [Action] {
        guard case .bool(let wantsPair)? = packet.body["pair"] else { return [] }  // KDE reads a missing "pair" as false; we ignore it
        if wantsPair {
            switch state {
            case .requested:
                state = .paired
                return [.paired]
            case .requestedByPeer:
                return []  // a second request before the first timed out
            case .paired, .notPaired:
                // Request and answer look the same: a request from a paired device unpairs it
                // first (KDE does the same, or two devices would accept each other forever).
                var actions: [Action] = []
                if state == .paired { actions.append(.unpaired) }
                state = .notPaired
                var timestamp: Int64?
                if protocolVersion >= 8 {
                    guard let t = Self.seconds(packet.body["timestamp"]) else {
                        return actions + [.failed("the request carried no timestamp")]
                    }
                    // Compared as a range: a hostile timestamp near Int64's ends must not overflow.
                    let skew = KDEConnectLimits.pairingClockSkewSeconds
                    guard t >= now.seconds - skew, t <= now.seconds + skew else {
                        return actions + [.failed("the two devices' clocks are more than 30 minutes apart")]
                    }
                    timestamp = t
                }
                state = .requestedByPeer(timestamp: timestamp, deadline: now.adding(nanoseconds: KDEConnectLimits.pairingTimeoutNanoseconds))
                return actions + [.askUser(timestamp: timestamp)]
            }
        }
        switch state {
        case .notPaired:
            return []
        case .requested, .requestedByPeer:
            state = .notPaired
            return [.failed("cancelled on the other device")]
        case .paired:
            state = .notPaired
            return [.unpaired]
        }
    }

    /// The request's time in seconds, as KDE reads it (`get<long>`): kdeconnect 25.04 writes
    /// a C `long`, which Qt's JSON has as a number of either kind, or as text.
    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .integer(let t)?: return t
        case .double(let d)? where d.rounded() == d && abs(d) < 9e15: return Int64(d)
        case .string(let s)?: return Int64(s)
        default: return nil
        }
    }

    // MARK: - From the user

    /// The user asked to pair (`handoffctl kdeconnect pair`). A request of theirs pending
    /// is accepted instead.
    public mutating func request(at now: Timestamp) -> [Action] {
        switch state {
        case .paired:
            return [.failed("already paired")]
        case .requestedByPeer:
            return accept(at: now)
        case .requested, .notPaired:
            let t = now.seconds
            state = .requested(timestamp: t, deadline: now.adding(nanoseconds: KDEConnectLimits.pairingTimeoutNanoseconds))
            return [.send(pair: true, timestamp: protocolVersion >= 8 ? t : nil)]
        }
    }

    public mutating func accept(at now: Timestamp) -> [Action] {
        guard case .requestedByPeer = state else { return [.failed("no pairing request from that device is pending")] }
        state = .paired
        return [.send(pair: true, timestamp: nil), .paired]
    }

    public mutating func reject() -> [Action] {
        guard case .requestedByPeer = state else { return [.failed("no pairing request from that device is pending")] }
        state = .notPaired
        return [.send(pair: false, timestamp: nil)]
    }

    public mutating func unpair() -> [Action] {
        let was = state
        state = .notPaired
        switch was {
        case .paired: return [.send(pair: false, timestamp: nil), .unpaired]
        case .requested, .requestedByPeer: return [.send(pair: false, timestamp: nil)]
        case .notPaired: return []
        }
    }

    // MARK: - Time

    /// The deadline passed: the pending request is cancelled on both sides.
    public mutating func timeDue(at now: Timestamp) -> [Action] {
        guard let deadline, now >= deadline else { return [] }
        state = .notPaired
        return [.send(pair: false, timestamp: nil), .failed("timed out: not answered within 30 seconds")]
    }
}
