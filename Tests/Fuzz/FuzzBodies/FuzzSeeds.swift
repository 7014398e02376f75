import HandoffCore

/// The activity and document the seed corpora of several targets are made of.
enum FuzzSeeds {
    static func document() -> DocumentReference {
        DocumentReference(root: SyncedRootID(kind: "syncthing", id: "abcd-1234"), path: "Projects/plan.odt", size: 42, sha256: [UInt8](repeating: 7, count: 32))
    }

    static func activity() -> Activity {
        var a = Activity(id: ActivityID("0123456789abcdef0123456789abcdef")!, activityType: "com.example.editor.edit-note", title: "Draft",
                         userInfo: ["line": .integer(12), "when": .date(Timestamp(seconds: 1_800_000_000)), "tags": .array([.string("a")]),
                                    DocumentReference.userInfoKey: document().propertyValue],
                         requiredUserInfoKeys: ["line"], webpageURL: "https://example.org/n/1", keywords: ["notes"], eligibleForSearch: true,
                         createdAt: Timestamp(seconds: 1_800_000_000), origin: DeviceRef(name: "desk", id: "ABC"))
        a.searchableUserInfoKeys = ["tags"]
        return a
    }
}
