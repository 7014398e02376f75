import Foundation
import Testing

/// Each fuzz target's body (Tests/Fuzz/FuzzBodies) over its committed corpus (the seeds the
/// real encoders make and what the long libFuzzer runs found and kept: thousands of
/// inputs), then over mutants of each input made as libFuzzer makes them. This is what the
/// suite runs of the fuzzers: the libFuzzer build of every target with AddressSanitizer
/// costs CI about 11 minutes, which its old 10-second runs (mostly this same corpus)
/// did not repay. Long runs stay scripts/dev/fuzz's; `scripts/test --sanitize address` runs
/// this test under AddressSanitizer.
struct FuzzCorpusTests {
    static let targets = ["fuzz-json", "fuzz-plist", "fuzz-peer-message", "fuzz-frames", "fuzz-account", "fuzz-kept", "fuzz-local-input", "fuzz-pairing",
                          "fuzz-kdeconnect"]

    static func body(_ target: String) -> ([UInt8]) -> Void {
        switch target {
        case "fuzz-json": JSONFuzzing.test
        case "fuzz-plist": PropertyListFuzzing.test
        case "fuzz-peer-message": PeerMessageFuzzing.test
        case "fuzz-frames": FramesFuzzing.test
        case "fuzz-account": AccountFuzzing.test
        case "fuzz-kept": KeptFuzzing.test
        case "fuzz-local-input": LocalInputFuzzing.test
        case "fuzz-pairing": PairingFuzzing.test
        case "fuzz-kdeconnect": KDEConnectFuzzing.test
        default: { _ in Issue.record("no fuzz target \(target)") }
        }
    }

    /// Mutants per corpus input (HANDOFF_FUZZ_MUTANTS changes it).
    static let mutants = Int(ProcessInfo.processInfo.environment["HANDOFF_FUZZ_MUTANTS"] ?? "") ?? 3

    static func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("corpus/\(target)")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().map {
            ($0, Array(try Data(contentsOf: dir.appendingPathComponent($0))))
        }
    }

    // One target at a time: all eight at once took both cores for half a minute, and the
    // integration tests' daemons, started in the same first seconds, then waited past their
    // 30 s to accept (scripts/test also runs this suite after the others).
    @Test(.serialized, arguments: targets)
    func theCorpusAndItsMutantsBreakNothing(target: String) throws {
        let run = Self.body(target)
        let inputs = try Self.corpus(target)
        // The committed corpora hold hundreds to thousands of inputs each; an empty or lost
        // one would make this test pass on nothing.
        #expect(inputs.count >= 400, "\(target): only \(inputs.count) inputs in its corpus")
        let broken = Broken()
        func check(_ bytes: [UInt8], _ what: String) {
            FuzzCheck.$broken.withValue({ message in
                broken.add("\(what) (base64 \(Data(bytes).base64EncodedString().prefix(2000))): \(message)")
            }) { run(bytes) }
        }
        defer {
            if !broken.found.isEmpty {
                let first = broken.found.prefix(5).joined(separator: "\n")
                Issue.record("\(target): \(broken.found.count) inputs broke an invariant; the first:\n\(first)")
            }
        }
        var mutator = Mutator(seed: target.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 })
        for (name, bytes) in inputs {
            check(bytes, "corpus input \(name)")
            for n in 0..<Self.mutants {
                let other = inputs[mutator.below(inputs.count)].bytes
                check(mutator.mutate(bytes, splicingWith: other), "mutant \(n) of \(name)")
            }
        }
    }

    @Test func mutantsDifferFromTheirInputAndRepeatForASeed() {
        var a = Mutator(seed: 7), b = Mutator(seed: 7)
        let input = Array("{\"title\":\"a note\",\"userInfo\":{}}".utf8)
        let first = (0..<1000).map { _ in a.mutate(input, splicingWith: [1, 2, 3]) }
        let second = (0..<1000).map { _ in b.mutate(input, splicingWith: [1, 2, 3]) }
        #expect(first == second)
        #expect(first.filter { $0 != input }.count > 900)
        #expect(Set(first).count > 500)
        #expect(first.allSatisfy { $0.count <= input.count * 2 + 64 })
    }
}

/// What one test's inputs broke; only its own task adds to it, one input at a time.
final class Broken: @unchecked Sendable {
    private(set) var found: [String] = []
    func add(_ failure: String) { found.append(failure) }
}

/// libFuzzer's mutations, without its coverage feedback: bit flips, interesting values
/// (bounds of lengths and counts), inserted, erased, copied and truncated ranges, and
/// splices with another input. Deterministic for a seed (SplitMix64), so that a failure
/// reproduces.
struct Mutator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }

    static let interesting: [[UInt8]] = [[0], [1], [0x7f], [0x80], [0xff], [0xff, 0xff], [0x7f, 0xff], [0x80, 0x00], [0, 0],
                                         [0xff, 0xff, 0xff, 0xff], [0x7f, 0xff, 0xff, 0xff], [0, 0, 0, 0], [0, 0, 0x10, 0x01]]

    mutating func mutate(_ input: [UInt8], splicingWith other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0...below(4) {
            let at = below(bytes.count + 1)
            switch below(8) {
            case 0 where !bytes.isEmpty:  // flip a bit
                let i = below(bytes.count)
                bytes[i] ^= 1 << UInt8(below(8))
            case 1 where !bytes.isEmpty:  // an interesting value over what is there
                let value = Self.interesting[below(Self.interesting.count)]
                let i = below(bytes.count)
                bytes.replaceSubrange(i..<min(bytes.count, i + value.count), with: value)
            case 2:  // random bytes inserted
                bytes.insert(contentsOf: (0..<1 + below(8)).map { _ in UInt8(truncatingIfNeeded: next()) }, at: at)
            case 3 where !bytes.isEmpty:  // a range erased
                let i = below(bytes.count)
                bytes.removeSubrange(i..<min(bytes.count, i + 1 + below(16)))
            case 4 where !bytes.isEmpty:  // a range copied elsewhere
                let i = below(bytes.count)
                let range = Array(bytes[i..<min(bytes.count, i + 1 + below(32))])
                bytes.insert(contentsOf: range, at: below(bytes.count + 1))
            case 5:  // truncated
                bytes.removeSubrange(at...)
            case 6:  // spliced: this input's start, the other's end
                bytes = Array(bytes[..<at]) + Array(other[below(other.count + 1)...])
            default:  // a byte set to anything
                if !bytes.isEmpty { bytes[below(bytes.count)] = UInt8(truncatingIfNeeded: next()) }
            }
            // Bounded: a mutant is never much larger than what it came from.
            if bytes.count > input.count * 2 + 64 { bytes.removeSubrange((input.count * 2 + 64)...) }
        }
        return bytes
    }
}
