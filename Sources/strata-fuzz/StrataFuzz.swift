import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `strata-fuzz TARGET [ARGUMENTS…]`: the libFuzzer targets of Strata (docs/Fuzzing.md).
///
/// Built for fuzzing (`scripts/fuzz.sh`, which compiles every module with AddressSanitizer
/// and coverage instrumentation and defines `STRATA_FUZZING`), the arguments after TARGET
/// go to libFuzzer: corpus directories and `-flags`. Built normally, the executable replays
/// inputs instead: each file given (or each file in each directory given) runs through the
/// target once, so that a crash input can be checked without instrumentation.
@main
struct StrataFuzz {
    static func main() {
        var arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTargets.make(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: strata-fuzz TARGET [libFuzzer arguments | input files]\ntargets: \(FuzzTargets.names.joined(separator: ", "))\n".utf8))
            exit(2)
        }
        FuzzTargets.current = target
        atexit { FuzzTargets.removeScratchDirectories() }
        arguments.remove(at: 1)
        #if STRATA_FUZZING
        exit(runLibFuzzer(arguments))
        #else
        exit(replay(Array(arguments.dropFirst()), target: target))
        #endif
    }

    /// Runs every file of `paths` (directories are listed) through `target`.
    static func replay(_ paths: [String], target: any FuzzTarget) -> Int32 {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("strata-fuzz: no such file: \(path)\n".utf8))
                return 1
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().map { "\(path)/\($0)" }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            target.run(data)
        }
        print("replayed \(files.count) input(s) through \(type(of: target).name)")
        return 0
    }
}

// MARK: - libFuzzer

#if STRATA_FUZZING
/// libFuzzer's entry point when the program has its own `main` (libclang_rt.fuzzer_no_main).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

func runLibFuzzer(_ arguments: [String]) -> Int32 {
    var argc = CInt(arguments.count)
    var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    return pointers.withUnsafeMutableBufferPointer { buffer in
        var argv = buffer.baseAddress!
        return LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
            let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
            FuzzTargets.current?.run(data)
            return 0
        }
    }
}
#endif
