import FuzzBodies
import FuzzSupport

// libFuzzer's entry for one input; the body is JSONFuzzing (Tests/Fuzz/FuzzBodies), which the
// test suite also runs over this target's corpus (FuzzCorpusTests).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    JSONFuzzing.test(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

// SwiftPM links an executable's entry point as `fuzz_json_main`; hand the process to libFuzzer.
@_cdecl("fuzz_json_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc, argv, seeds: JSONFuzzing.seeds, fuzzJSON)
}
