import EPFFuzzTargets
import Foundation
#if EPF_LIBFUZZER
import CLibFuzzer
#endif

// Built with `-D EPF_LIBFUZZER -sanitize=fuzzer,address` (scripts/fuzz), this is a libFuzzer binary running the
// target named by EPF_FUZZ_TARGET: `main` hands the command line to libFuzzer (`LLVMFuzzerRunDriver`), which calls
// `fuzzOneInput` for every input. A plain build is the replay tool: `epf-fuzz TARGET FILE-OR-DIRECTORY...` runs
// every file through the harness and reports failures.

#if EPF_LIBFUZZER
/// The target of this process, from EPF_FUZZ_TARGET.
let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["EPF_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget.named(name) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        fatalError("EPF_FUZZ_TARGET must name a target (\(names)), not '\(name)'")
    }
    return target
}()

/// One input through the target; an oracle failure stops the process so that libFuzzer keeps the input. Exported
/// under libFuzzer's name too, which its archive refers to.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    do {
        try fuzzTarget.run(bytes)
    } catch {
        fatalError("\(fuzzTarget.name): oracle failure: \(error)")
    }
    return 0
}

_ = fuzzTarget
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
#else
exit(ReplayCommand.main(Array(CommandLine.arguments.dropFirst())))
#endif
