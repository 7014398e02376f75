import FuzzBodies
import FuzzSupport

// libFuzzer's entry for one input; the body is KDEConnectFuzzing (Tests/Fuzz/FuzzBodies), which the
// test suite also runs over this target's corpus (FuzzCorpusTests).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKDEConnect(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    KDEConnectFuzzing.test(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

// SwiftPM links an executable's entry point as `fuzz_kdeconnect_main`; hand the process to libFuzzer.
@_cdecl("fuzz_kdeconnect_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc, argv, seeds: KDEConnectFuzzing.seeds, fuzzKDEConnect)
}
