import HandoffCore
import Testing

/// What the history may index of an activity: nothing unless it is eligible for search;
/// then its keywords, its display name and description, and the opted-in userInfo values.
struct SearchFieldsTests {
    func activity(_ change: (inout Activity) -> Void) -> Activity {
        var a = Activity(id: .random(), activityType: "org.example.notes", userInfo: ["client": .string("Acme"), "secret": .string("zebra")],
                         keywords: ["finance"], createdAt: Timestamp(seconds: 1), origin: DeviceRef(name: "a"))
        a.searchableUserInfoKeys = ["client"]
        a.displayName = "Quarterly report"
        a.contentDescription = "Figures for Q3"
        change(&a)
        return a
    }

    @Test func theSearchAttributesComeFirstAndOnlyWhenSearchable() throws {
        #expect(SearchFields(activity { _ in }) == nil)
        let f = try #require(SearchFields(activity { $0.eligibleForSearch = true }))
        #expect(f.keywords == ["finance"])
        #expect(f.text == "Quarterly report Figures for Q3 Acme")
        #expect(!f.text.contains("zebra"))
        let none = try #require(SearchFields(activity { $0.eligibleForSearch = true; $0.displayName = nil; $0.contentDescription = "" }))
        #expect(none.text == "Acme")
    }

    @Test func theTextStaysWithinItsCap() throws {
        let f = try #require(SearchFields(activity { $0.eligibleForSearch = true; $0.contentDescription = String(repeating: "é", count: 4000) }))
        #expect(f.text.utf8.count <= SearchFields.maximumTextBytes)
    }
}
