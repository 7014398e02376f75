import FuzzBodies
import FuzzSupport

// libFuzzer's entry for one input; the body is FramesFuzzing (Tests/Fuzz/FuzzBodies), which the
// test suite also runs over this target's corpus (FuzzCorpusTests).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FramesFuzzing.test(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

// SwiftPM links an executable's entry point as `fuzz_frames_main`; hand the process to libFuzzer.
@_cdecl("fuzz_frames_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc, argv, seeds: FramesFuzzing.seeds, fuzzFrames)
}
