#if canImport(Glibc)
import Glibc
#endif

/// What every fuzz target's entry point does: `TARGET --write-seeds DIR` writes the seed
/// corpus its real encoders make (`seed-0`, `seed-1`, ...); anything else hands the
/// process to libFuzzer with `testOneInput`.
public func runFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, seeds: () throws -> [[UInt8]],
                      _ testOneInput: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt {
    if argc == 3, let flag = argv[1], String(cString: flag) == "--write-seeds", let dir = argv[2] {
        do {
            for (n, seed) in try seeds().enumerated() {
                let path = String(cString: dir) + "/seed-\(n)"
                guard let f = fopen(path, "wb") else { print("cannot write \(path)"); return 1 }
                _ = seed.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, f) }
                fclose(f)
            }
        } catch {
            print("making the seeds failed: \(error)")
            return 1
        }
        return 0
    }
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector, testOneInput)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt
