import FuzzSupport
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// The binary property encoding other workstations send: values, activities, summaries,
/// document references. What decodes must encode back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPropertyList(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let value = try? PropertyBinaryEncoding.decode(bytes) else { return 0 }
    // Compared as bytes: a NaN is never equal to itself, but must encode the same.
    let encoded = PropertyBinaryEncoding.encode(value)
    precondition((try? PropertyBinaryEncoding.decode(encoded)).map(PropertyBinaryEncoding.encode) == encoded, "a value does not survive its encoding")
    if let a = try? ActivityPropertyList.decode(value) {
        let bytes = PropertyBinaryEncoding.encode(ActivityPropertyList.encode(a))
        let again = (try? PropertyBinaryEncoding.decode(bytes)).flatMap { try? ActivityPropertyList.decode($0) }
        precondition(again.map { PropertyBinaryEncoding.encode(ActivityPropertyList.encode($0)) } == bytes, "an activity does not survive its encoding")
        _ = try? ActivityValidation.validate(a, limits: ActivityLimits())
    }
    _ = try? ActivitySummary(propertyList: value)
    _ = try? DocumentReference(propertyValue: value)
    _ = try? SearchFields(propertyList: value)
    _ = TypedJSON.encode(value)
    return 0
}

// SwiftPM links an executable's entry point as `fuzz_plist_main`; hand the process to libFuzzer.
@_cdecl("fuzz_plist_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc, argv, seeds: seeds, fuzzPropertyList)
}

/// Valid inputs made by the real encoders: the seed corpus (`TARGET --write-seeds DIR`).
func seeds() -> [[UInt8]] {
    let a = seedActivity()
    return [PropertyBinaryEncoding.encode(ActivityPropertyList.encode(a)), PropertyBinaryEncoding.encode(ActivitySummary(a, payloadSize: 100).propertyList),
            PropertyBinaryEncoding.encode(seedDocument().propertyValue), PropertyBinaryEncoding.encode(.array([.integer(-1), .double(2.5), .boolean(true), .null]))]
}

func seedDocument() -> DocumentReference {
    DocumentReference(root: SyncedRootID(kind: "syncthing", id: "abcd-1234"), path: "Projects/plan.odt", size: 42, sha256: [UInt8](repeating: 7, count: 32))
}

func seedActivity() -> Activity {
    var a = Activity(id: ActivityID("0123456789abcdef0123456789abcdef")!, activityType: "com.example.editor.edit-note", title: "Draft",
                     userInfo: ["line": .integer(12), "when": .date(Timestamp(seconds: 1_800_000_000)), "tags": .array([.string("a")]),
                                DocumentReference.userInfoKey: seedDocument().propertyValue],
                     requiredUserInfoKeys: ["line"], webpageURL: "https://example.org/n/1", keywords: ["notes"], eligibleForSearch: true,
                     createdAt: Timestamp(seconds: 1_800_000_000), origin: DeviceRef(name: "desk", id: "ABC"))
    a.searchableUserInfoKeys = ["tags"]
    return a
}
