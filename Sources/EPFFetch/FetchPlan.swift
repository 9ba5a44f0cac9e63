import EPFSQLite
import EPFSchema
import Foundation

/// What fetch does with one remote file.
package enum FetchAction: String, Codable, Sendable {
    /// Not in the mirror: download it.
    case download
    /// A `.part` of it is there: continue it.
    case resume
    /// Already in the mirror, verified.
    case present
    /// An incremental the database's ledger shows applied already.
    case applied
}

/// One remote file with its digest, size and what to do.
package struct PlannedFile: Codable, Sendable {
    /// The remote file.
    package var file: RemoteFile
    /// The digest its `.md5` gives.
    package var md5: String
    /// The size the server gives (HEAD), when downloaded.
    package var size: Int64?
    /// Bytes already in a `.part` from an earlier run.
    package var partBytes: Int64
    /// What fetch does.
    package var action: FetchAction
    /// The local path it goes to (inside a staging folder while its feed directory is new).
    package var target: String
}

/// What the database has applied already, read from its ledger (read-only).
struct LedgerView {
    let connection: SQLiteConnection?

    /// Opens the ledger of `database` when the file exists; a missing database has applied nothing.
    init(database: String?) {
        guard let database, FileManager.default.fileExists(atPath: database) else {
            connection = nil
            return
        }
        connection = try? SQLiteConnection(path: database, mode: .readOnly)
    }

    /// True when a file with this MD5 was applied completely.
    func applied(md5: String) -> Bool {
        guard let connection else { return false }
        return (try? StoreBookkeeping.appliedFile(md5: md5, connection)) ?? false
    }

    /// The date (`YYYYMMDD`) of the newest full export the database applied.
    func builtFrom() -> String? {
        guard let connection else { return nil }
        return (try? StoreBookkeeping.newestAppliedFull(connection)) ?? nil
    }
}

/// Decides, file by file, what to download: not what the mirror holds verified, not an incremental the ledger
/// applied. Full exports are always mirrored, since sync needs the newest full to find its incrementals.
struct FetchPlanner {
    let mirror: Mirror
    let ledger: LedgerView
    let session: HTTPSession
    let log: (String) -> Void

    func plan(_ files: [RemoteFile]) throws -> [PlannedFile] {
        var result: [PlannedFile] = []
        for file in files {
            guard let text = try session.text(file.md5URL, limit: 4096, log: log) else {
                throw FetchError.unavailable(url: file.md5URL, message: "HTTP 404: the .md5 listed beside "
                                             + "\(file.url) is missing")
            }
            guard let digest = MD5Sidecar.digest(text) else {
                throw FetchError.badSidecar(url: file.md5URL, text: text)
            }
            let target = mirror.target(for: file)
            var planned = PlannedFile(file: file, md5: digest, size: nil, partBytes: 0, action: .download,
                                      target: target)
            if mirror.holds(target, digest: digest) || mirror.holds(mirror.path(file.mirrorPath), digest: digest) {
                planned.action = .present
            } else if file.incremental && ledger.applied(md5: digest) {
                planned.action = .applied
            } else {
                guard let size = try session.size(file.url, log: log) else {
                    throw FetchError.unavailable(url: file.url, message: "the server gives no Content-Length for it, "
                                                 + "so it cannot be fetched in verified, resumable ranges")
                }
                planned.size = size
                if let state = PartFile.loadState(target + ".part.state"), state.url == file.url,
                   state.md5 == digest, state.size == planned.size {
                    planned.partBytes = state.segments.reduce(0) { $0 + $1.done }
                    if planned.partBytes > 0 { planned.action = .resume }
                }
            }
            result.append(planned)
        }
        return result
    }
}
