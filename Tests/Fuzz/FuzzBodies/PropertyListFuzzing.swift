import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// The binary property encoding other workstations send: values, activities, summaries,
/// document references. What decodes must encode back to the same value.
public enum PropertyListFuzzing {
    /// One input: a broken invariant is reported through `fuzzCheck` (a crash under libFuzzer).
    public static func test(_ bytes: [UInt8]) {
        guard let value = try? PropertyBinaryEncoding.decode(bytes) else { return }
        // Compared as bytes: a NaN is never equal to itself, but must encode the same.
        let encoded = PropertyBinaryEncoding.encode(value)
        fuzzCheck((try? PropertyBinaryEncoding.decode(encoded)).map(PropertyBinaryEncoding.encode) == encoded, "a value does not survive its encoding")
        if let a = try? ActivityPropertyList.decode(value) {
            let bytes = PropertyBinaryEncoding.encode(ActivityPropertyList.encode(a))
            let again = (try? PropertyBinaryEncoding.decode(bytes)).flatMap { try? ActivityPropertyList.decode($0) }
            fuzzCheck(again.map { PropertyBinaryEncoding.encode(ActivityPropertyList.encode($0)) } == bytes, "an activity does not survive its encoding")
            _ = try? ActivityValidation.validate(a, limits: ActivityLimits())
        }
        _ = try? ActivitySummary(propertyList: value)
        _ = try? DocumentReference(propertyValue: value)
        _ = try? SearchFields(propertyList: value)
        _ = TypedJSON.encode(value)
    }

    /// Valid inputs made by the real encoders: the seed corpus (`TARGET --write-seeds DIR`).
    public static func seeds() -> [[UInt8]] {
        let a = FuzzSeeds.activity()
        return [PropertyBinaryEncoding.encode(ActivityPropertyList.encode(a)), PropertyBinaryEncoding.encode(ActivitySummary(a, payloadSize: 100).propertyList),
                PropertyBinaryEncoding.encode(FuzzSeeds.document().propertyValue), PropertyBinaryEncoding.encode(.array([.integer(-1), .double(2.5), .boolean(true), .null]))]
    }
}
