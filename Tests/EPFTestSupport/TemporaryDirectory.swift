import Foundation

/// A temporary directory for one test, removed when the last reference goes away.
public final class TemporaryDirectory {
    /// The directory.
    public let url: URL
    /// The directory's path.
    public var path: String { url.path }

    /// Creates a fresh, uniquely named directory under the system's temporary directory.
    public init(prefix: String = "epf-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path inside the directory of `components` joined ("a/b" or "a", "b").
    public func file(_ components: String...) -> String {
        components.reduce(url) { $0.appendingPathComponent($1) }.path
    }

    /// Writes bytes to `relative`, creating folders as needed.
    public func write(_ relative: String, _ bytes: [UInt8]) throws {
        let target = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        try Data(bytes).write(to: target)
    }
}
