import Foundation

/// Writes a planned export to disk: one directory per feed (`itunes20260105/application`, ...), or a v3 archive
/// (`itunes20260105.tbz` holding that directory) with its `.md5` sidecar, or a directory holding v5's archives of
/// one table each (`popularity20260105/free_application_popularity_per_genre.tbz` and its `.md5`) among plain files;
/// made by the system's `tar`, `bzip2` and `md5sum`. Returns the paths to give `epf import`.
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
                let bytes = Data(file.bytes(full: file.full ?? export.full))
                guard file.archived && !feed.archived else {
                    try bytes.write(to: feedDirectory.appendingPathComponent(file.table.name))
                    continue
                }
                // v5's layout: `<feed>/<table>.tbz` holding `<feed>/<table>`, made in a folder of its own.
                let staging = directory.appendingPathComponent("staging-\(name)-\(file.table.name)")
                try FileManager.default.createDirectory(at: staging.appendingPathComponent(name),
                                                        withIntermediateDirectories: true)
                try bytes.write(to: staging.appendingPathComponent(name).appendingPathComponent(file.table.name))
                let archive = feedDirectory.appendingPathComponent("\(file.table.name).tbz")
                try run("/bin/tar", ["-cjf", archive.path, "-C", staging.path, "\(name)/\(file.table.name)"])
                try FileManager.default.removeItem(at: staging)
                try sidecar(for: archive, wrong: file.wrongMD5)
            }
            guard feed.archived else {
                paths.append(feedDirectory.path)
                continue
            }
            let archive = directory.appendingPathComponent("\(name).tbz")
            try run("/bin/tar", ["-cjf", archive.path, "-C", directory.path, name])
            try FileManager.default.removeItem(at: feedDirectory)
            try sidecar(for: archive, wrong: feed.wrongMD5)
            paths.append(archive.path)
        }
        return paths
    }

    /// Writes `<archive>.md5` in Apple's form, `MD5 (name.tbz) = <hex>`, naming another digest when `wrong`.
    private static func sidecar(for archive: URL, wrong: Bool) throws {
        var digest = try run("/usr/bin/md5sum", [archive.path]).prefix(32)
        if wrong {
            digest = Substring(String(digest.reversed()) == String(digest) ? "0" + digest.dropFirst()
                               : String(digest.reversed()))
        }
        try Data("MD5 (\(archive.lastPathComponent)) = \(digest)\n".utf8)
            .write(to: archive.appendingPathExtension("md5"))
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
