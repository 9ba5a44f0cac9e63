import Foundation

/// Writes a planned export to disk: one directory per feed (`itunes20260105/application`, ...), or a v3 archive
/// (`itunes20260105.tbz` holding that directory) with its `.md5` sidecar, made by the system's `tar`, `bzip2` and
/// `md5sum`. Returns the paths to give `epf import`.
enum FeedWriter {
    struct ToolError: Error, CustomStringConvertible {
        let description: String
    }

    static func write(_ export: PlannedExport, under root: URL) throws -> [String] {
        let directory = root.appendingPathComponent("export\(export.number)")
        var paths: [String] = []
        for feed in export.feeds {
            let name = "\(feed.feed)\(feed.day ?? export.day)"
            let feedDirectory = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: feedDirectory, withIntermediateDirectories: true)
            for file in feed.files {
                try Data(file.bytes(full: file.full ?? export.full))
                    .write(to: feedDirectory.appendingPathComponent(file.table.name))
            }
            guard feed.archived else {
                paths.append(feedDirectory.path)
                continue
            }
            let archive = directory.appendingPathComponent("\(name).tbz")
            try run("/bin/tar", ["-cjf", archive.path, "-C", directory.path, name])
            try FileManager.default.removeItem(at: feedDirectory)
            var digest = try run("/usr/bin/md5sum", [archive.path]).prefix(32)
            if feed.wrongMD5 {
                digest = Substring(String(digest.reversed()) == String(digest) ? "0" + digest.dropFirst()
                                   : String(digest.reversed()))
            }
            try Data("MD5 (\(name).tbz) = \(digest)\n".utf8)
                .write(to: directory.appendingPathComponent("\(name).tbz.md5"))
            paths.append(archive.path)
        }
        return paths
    }

    @discardableResult
    private static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolError(description: "\(tool) \(arguments.joined(separator: " ")) failed: "
                            + "status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
