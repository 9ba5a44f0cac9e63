import EPFFormat

/// The checks a table passes before it may become visible, the same for every database: the read summary of each
/// part (truncation, `#recordsWritten`) and the reject limit.
enum LoadVerification {
    /// The verdict on one part: `failure` refuses the table, `warning` accepts it with a note.
    struct Verdict {
        package var failure: String?
        package var warning: String?
    }

    /// Checks a part's read summary: a file without its footer is truncated; a footer count that differs from
    /// the records read is a mismatch, accepted only with `allowCountMismatch`.
    package static func check(_ summary: EPFReadSummary, location: String, allowCountMismatch: Bool) -> Verdict {
        if summary.truncated {
            return Verdict(failure: "\(location): truncated: no #recordsWritten footer; the file ends at byte "
                           + "\(summary.bytes) after \(summary.records) records")
        }
        guard summary.countMismatch else { return Verdict() }
        var text = "\(location): #recordsWritten says \(summary.declaredRecords ?? 0) but "
            + "\(summary.records) records were read (file ends at byte \(summary.bytes))"
        if summary.declaredRecords == -1 { text = "\(location): the #recordsWritten footer is not a number" }
        if summary.recordsAfterFooter > 0 {
            text += "; \(summary.recordsAfterFooter) records follow the #recordsWritten footer"
        }
        if allowCountMismatch { return Verdict(warning: text + "; accepted (--allow-count-mismatch)") }
        return Verdict(failure: text + "; use --allow-count-mismatch to accept it")
    }

    /// The refusal when more records were rejected than `--max-rejects` allows, else nil.
    static func rejectLimit(rejects: Int, maxRejects: Int, rejectsPath: String) -> String? {
        guard rejects > maxRejects else { return nil }
        return "\(rejects) rejected records exceed --max-rejects \(maxRejects); see \(rejectsPath)"
    }
}
