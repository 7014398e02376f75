import HandoffCore
import Testing

@Suite("Activity ID")
struct ActivityIDTests {
    @Test func parsesThirtyTwoHexDigitsCaseInsensitively() throws {
        let id = try #require(ActivityID("0123456789ABCDEFabcdef0123456789"))
        #expect(id.rawValue == "0123456789abcdefabcdef0123456789")
        #expect(id.description == id.rawValue)
        #expect(ActivityID("0123456789abcdefabcdef0123456789") == id)
        #expect(ActivityID("0123456789ABCDEFABCDEF0123456789") == id)
    }

    @Test(arguments: [
        "", "0", String(repeating: "a", count: 31), String(repeating: "a", count: 33), String(repeating: "g", count: 32),
        "0123456789abcdef0123456789abcde-", " 0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdé",
        "{0123456789abcdef0123456789abcdef}", "01234567-89ab-cdef-0123-456789abcdef", "0x0123456789abcdef0123456789abcd",
    ])
    func rejectsMalformedIDs(_ text: String) {
        #expect(ActivityID(text) == nil)
    }

    @Test func randomIDsAreWellFormedAndUnique() {
        var seen = Set<ActivityID>()
        for _ in 0..<10_000 {
            let id = ActivityID.random()
            #expect(id.rawValue.utf8.count == 32)
            #expect(ActivityID(id.rawValue) == id)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}
