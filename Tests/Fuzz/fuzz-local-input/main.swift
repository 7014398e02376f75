import FuzzBodies
import FuzzSupport

// libFuzzer's entry for one input; the body is LocalInputFuzzing (Tests/Fuzz/FuzzBodies), which the
// test suite also runs over this target's corpus (FuzzCorpusTests).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLocalInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    LocalInputFuzzing.test(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

// SwiftPM links an executable's entry point as `fuzz_local_input_main`; hand the process to libFuzzer.
@_cdecl("fuzz_local_input_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc, argv, seeds: LocalInputFuzzing.seeds, fuzzLocalInput)
}
