import HandoffCore
import HandoffControlAPI
import Testing

/// The listings the daemon writes and clients read (`/v1/peers`, `/v1/offers`,
/// `/v1/devices`, `/v1/continue`) are one set of types: what one side encodes, the other
/// decodes to the same value.
@Suite("Listing types")
struct ListingTypesTests {
    func viaText(_ v: JSONValue) throws -> JSONValue { try json(v.serialized()) }

    @Test func peersRoundTrip() throws {
        let peers = [
            PeerInfo(id: "ABCDEFG-1", name: "desk", addresses: ["10.0.0.2", "fe80::1%2"], trusted: true, connected: true,
                     lastSeen: Timestamp(rfc3339: "2026-11-23T10:00:00Z")),
            PeerInfo(id: nil, name: "laptop (pairing)", addresses: ["10.0.0.3"], trusted: false, connected: false, lastSeen: nil),
        ]
        #expect(PeerInfo.list(json: try viaText(PeerInfo.listJSON(peers))) == peers)
        #expect(PeerInfo.list(json: .object([:])) == nil, "no list is not an empty list")
    }

    @Test func offersRoundTrip() throws {
        let a = everyFieldActivity()
        let offers = [Offer(device: PeerDevice(id: "ABCDEFG-1", name: "desk"), activity: ActivitySummary(a, payloadSize: 120), ageSeconds: 1.5)]
        #expect(try Offer.list(json: try viaText(Offer.listJSON(offers))) == offers)
        #expect(throws: ValidationError.self) { try Offer.list(json: .object(["offers": .array([.object([:])])])) }
    }

    @Test func devicesRoundTrip() throws {
        let at = Timestamp(rfc3339: "2026-11-23T10:00:00Z")
        let devices = AccountDevices(
            members: [.init(id: "A", name: "desk", isSelf: true, connected: false, introducedBy: nil, introducedAt: at),
                      .init(id: "B", name: "laptop", isSelf: false, connected: true, introducedBy: ("A", "desk"), introducedAt: at)],
            removed: [.init(id: "C", name: "old", removedBy: ("B", "laptop"), removedAt: at)])
        let back = AccountDevices(json: try viaText(devices.json))
        #expect(back.json == devices.json)
        #expect(back.members.map(\.id) == ["A", "B"] && back.members[1].introducedBy?.name == "desk" && back.members[0].isSelf)
        #expect(back.removed.first?.removedBy?.id == "B")
    }

    @Test func continuedActivityRoundTrip() throws {
        let a = everyFieldActivity()
        let record = ActivityRecord(activity: a, state: .current, owner: "peer", payloadSize: ActivityPropertyList.encodedSize(of: a), stale: false)
        let launched = LaunchOutcome.opened(LaunchedApp(route: .handler, appID: "org.example.Editor.desktop", appName: "Editor", uri: nil))
        for c in [ContinuedActivity(record: record, device: PeerDevice(id: "A", name: "desk")),
                  ContinuedActivity(record: record, device: PeerDevice(id: "A", name: "desk"), launch: launched,
                                    continuedAt: Timestamp(rfc3339: "2026-11-23T10:00:00Z"))] {
            #expect(try ContinuedActivity(json: try viaText(c.json)) == c)
        }
    }
}
