import EPFFormat

/// `epf inspect`: reports on feed files without loading them.
enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Check feed files: header, counts, bad records, throughput"
    static let help = """
    USAGE: epf inspect PATH... [--json]
    """
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        _ = try arguments.finish()
        return .ok
    }
}
