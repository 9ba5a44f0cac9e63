import EPFFormat
import EPFImport
import EPFPostgres
import EPFStore
import Foundation

/// `epf import` into PostgreSQL: the same inputs, order, verification, rejects, ledger and resume as `Importer`
/// gives SQLite (the loop is the shared `ImportPass`), with the tables in one schema. Derived data (search index,
/// lookup documents) is SQLite's only: lookups and `epf serve` read SQLite.
package final class PostgresImporter {
    /// Where the tables go.
    package let target: PostgresTarget
    /// The options (`rows` settled when the run starts).
    package private(set) var options: ImportOptions
    private let progress: ((ImportProgress) -> Void)?
    private let selection: TableSelection
    private var phases = PhaseTimes()
    private var phasesCPU = PhaseCPU()

    /// Prepares an import. Throws `ImportError.badOption` for an invalid --only/--skip expression.
    package init(target: PostgresTarget, options: ImportOptions, progress: ((ImportProgress) -> Void)? = nil) throws {
        self.target = target
        self.options = options
        self.progress = progress
        selection = try TableSelection(options: options)
    }

    private func selected(_ table: String) -> Bool { selection.contains(table) }

    /// The default rejects directory: `epf-<schema>.rejects` in the current directory.
    package var defaultRejectsDirectory: String { "epf-\(target.schema).rejects" }

    /// The ledger of the schema a dry run would import into, to read the selection it keeps (nothing is written);
    /// nil when the server does not answer or the schema has no bookkeeping, and the dry run then settles the
    /// selection from the command line alone, as it connects to nothing else.
    private func readOnlyLedger() -> PostgresLedger? {
        guard let connection = try? target.connect(),
              (try? target.tableExists(connection, "epf_settings")) == true,
              (try? target.tableExists(connection, "epf_ledger")) == true else { return nil }
        return PostgresLedger(connection: connection, target: target)
    }

    /// The schema's ledger, for `epf sync --plan` to leave out what it holds; nil when the schema has no
    /// bookkeeping yet. Throws `PostgresError` when the server cannot be reached.
    package func existingLedger() throws -> (any ImportLedger)? {
        let connection = try target.connect()
        guard try target.tableExists(connection, "epf_settings"), try target.tableExists(connection, "epf_ledger") else {
            return nil
        }
        return PostgresLedger(connection: connection, target: target)
    }

    /// Runs the import. Throws `ImportError.missingInput` or `.noTables` before doing anything when a path does
    /// not exist or holds no table file, `ImportError.locked` when another import holds the schema's lock,
    /// `PostgresError` when the server cannot be reached. Data problems do not throw: they are failed outcomes in
    /// the report.
    package func run(paths: [String]) throws -> ImportReport {
        try ImportError.checkInputs(paths)
        let started = Date()
        let startedCPU = PhaseCPU.now()
        var report = ImportReport(database: target.display)
        var connection: PostgresConnection?
        if !options.dryRun {
            let opened = try target.connect()
            try target.lock(opened)
            try target.createBookkeeping(opened)
            try dropLeftovers(opened)
            connection = opened
        }
        defer { if let connection { target.unlock(connection) } }
        let ledger = connection.map { PostgresLedger(connection: $0, target: target) }
        try options.settleRows(ledger: ledger, readOnly: options.dryRun ? readOnlyLedger() : nil)
        let rejectsDirectory = options.rejectsDirectory ?? defaultRejectsDirectory
        let pass = ImportPass<PostgresTableLoad>(options: options, ledger: ledger, selected: selected) {
            file, reader, source in
            try PostgresTableLoad(connection: connection, target: self.target, options: self.options, file: file,
                                  header: reader.header, source: source, rejectsDirectory: rejectsDirectory,
                                  progress: self.progress)
        } ended: { load, _ in
            self.phases.add(tableLoad: load.state.phases)
            self.phasesCPU.add(tableLoad: load.state.phasesCPU)
        }
        try pass.apply(paths: paths, report: &report)
        report.close(started: started, startedCPU: startedCPU, phases: phases, phasesCPU: phasesCPU)
        withExtendedLifetime(connection) {}
        return report
    }

    /// Removes tables a killed import renamed away but did not drop yet.
    private func dropLeftovers(_ connection: PostgresConnection) throws {
        let retired = try connection.query("""
            SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'epf\\_retired\\_%'
            """, [target.schema])
        for row in retired {
            if let name = row.first ?? nil { try connection.execute("DROP TABLE IF EXISTS \(target.qualified(name))") }
        }
    }
}
