import EPFPostgres
import Foundation

/// Why the test cluster could not start (PostgreSQL missing, initdb failing, ...).
public struct ClusterError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// One throwaway PostgreSQL cluster per test process, started at first use: `initdb` into a temporary
/// directory (as `nobody` when the tests run as root), listening only on a unix socket in that directory, with
/// durability switched off (the tests kill epf, never the server). A watchdog process stops it and removes the
/// directory when the test process ends, however it ends. Each test gets a database of its own (`database()`).
public final class TestCluster: Sendable {
    /// The shared cluster, or why there is none: tests FAIL with that message (scripts/test installs PostgreSQL).
    public static let shared: Result<TestCluster, ClusterError> = {
        do {
            return .success(try TestCluster())
        } catch let error as ClusterError {
            return .failure(error)
        } catch {
            return .failure(ClusterError(description: "\(error)"))
        }
    }()

    /// The cluster, or a thrown `ClusterError` naming what is missing.
    public static func get() throws -> TestCluster { try shared.get() }

    public let directory: String
    public let port: Int
    private let binaries: String
    private let asNobody: Bool

    private init() throws {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { Int($0) }.sorted()
        guard let version = versions.last,
              FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") else {
            throw ClusterError(description: "PostgreSQL server binaries not found under \(root)/*/bin: install the "
                               + "Debian package postgresql (scripts/test does) to run the PostgreSQL tests")
        }
        binaries = "\(root)/\(version)/bin"
        asNobody = getuid() == 0
        var template = Array("/tmp/epf-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError(description: "mkdtemp failed") }
        directory = String(cString: made)
        if asNobody, let nobody = getpwnam("nobody") {
            guard chown(directory, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else {
                throw ClusterError(description: "cannot give \(directory) to nobody")
            }
        }
        port = 20_000 + Int(getpid() % 20_000)
        try startWatchdog()
        try run("initdb", ["-D", "\(directory)/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                           "--locale=C", "--no-sync"])
        let settings = "-k \(directory) -p \(port) -c listen_addresses='' -c fsync=off -c full_page_writes=off "
            + "-c synchronous_commit=off -c max_connections=200 -c shared_buffers=64MB"
        try run("pg_ctl", ["-D", "\(directory)/data", "-l", "\(directory)/log", "-o", settings, "-w", "start"])
    }

    /// Runs a PostgreSQL program (as nobody when root) and waits; throws with its output when it fails.
    /// posix_spawn and waitpid rather than Foundation's Process, whose wait did not return once pg_ctl's
    /// server had detached; output goes to a file, which the server may keep open, and no other descriptor is
    /// passed on.
    private func run(_ program: String, _ arguments: [String]) throws {
        let path = "\(binaries)/\(program)"
        let argv = (asNobody ? ["/usr/sbin/runuser", "-u", "nobody", "--", path] : [path]) + arguments
        let outputPath = "\(directory)/\(program).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else is inherited: a pipe another test has just made for its own child (not yet close-on-exec)
        // would otherwise stay open in the server, and that test would wait for its end of file until this
        // process exits (seen: a test hung reading `epf generate`'s output, held open by postgres).
        // glibc 2.34 has the call, but Swift's Glibc module does not declare it.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np"),
              unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3) == 0 else {
            throw ClusterError(description: "posix_spawn_file_actions_addclosefrom_np is missing or failed")
        }
        var pointers: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &pointers, environ)
        guard spawned == 0 else {
            throw ClusterError(description: "cannot start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: "\(directory)/log", encoding: .utf8)) ?? ""
            throw ClusterError(description: "\(program) failed (status \(status)): \(output) \(log)")
        }
    }

    /// A shell that waits for this process to end, then stops the server and removes the directory.
    private func startWatchdog() throws {
        let stop = (asNobody ? "/usr/sbin/runuser -u nobody -- " : "")
            + "\(binaries)/pg_ctl -D \(directory)/data -m immediate stop"
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done; \(stop) >/dev/null 2>&1; "
            + "rm -rf \(directory)"
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", script]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
    }

    /// The URL of database `name` as user postgres over the unix socket.
    public func url(_ name: String) -> String {
        "postgresql://postgres@/\(name)?host=\(directory)&port=\(port)"
    }

    /// A fresh, empty database for one test; its URL.
    public func database() throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        try PostgresConnection(url: url("postgres")).execute("CREATE DATABASE \(name)")
        return url(String(name))
    }
}
