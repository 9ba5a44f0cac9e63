import EPFFormat
import EPFImport
import EPFSchema
import EPFSQLite

/// The `ChartAppLists` of one full load of an app chart table: the rows gathered as the load writes them
/// (`ChartAppRows`), or read from the staging table when those are not what it holds (a resumed load, duplicate
/// keys removed: `stagingChanged`); encoded before the swap (`prepare`) and written inside it, after the ledger
/// entry they are stamped with (`publish`). Nil for other tables and incremental loads (whose ledger entry tells
/// readers the lists are no longer the table's).
final class ChartAppRecorder {
    private let table: String
    private let staging: String
    /// Columns of the file: app, storefront, genre, rank, export date; nil when one is not an integer column of the
    /// file (then the rows are read from the staging table).
    private let columns: (app: Int, storefront: Int, genre: Int, rank: Int, date: Int)?
    /// The rows written, gathered; nil when they are read from the staging table.
    @exclusivity(unchecked) private var rows: ChartAppRows?
    private var lists: [(firstID: Int64, bytes: [UInt8])]?
    private var entries = 0

    /// A recorder for the load of `table` in `mode` into `staging`, its records of `schema`'s columns (the first
    /// `fileColumns` in the file); nil when the table is not an app chart or the load is not a full one.
    init?(table: String, mode: ExportMode, staging: String, schema: TableSchema, fileColumns: Int) {
        guard mode == .full, EPFTable.appCharts.contains(table), !schema.hasIntegerRowidKey else { return nil }
        self.table = table
        self.staging = staging
        func column(_ name: String) -> Int? {
            guard let index = schema.index(of: name), index < fileColumns,
                  schema.columns[index].type == .integer else { return nil }
            return index
        }
        if let app = column("application_id"), let storefront = column("storefront_id"),
           let genre = column("genre_id"), let rank = column("application_rank"), let date = column("export_date") {
            columns = (app, storefront, genre, rank, date)
            rows = ChartAppRows()
        } else {
            columns = nil
        }
    }

    /// A record the load writes to the staging table, as `RowBinder` bound it (an empty or unparsable integer is
    /// NULL).
    /// The columns the lists are made of.
    private static let columns = ["application_id", "storefront_id", "genre_id", "application_rank", "export_date"]

    @inline(__always)
    func rowAccepted(_ record: EPFRecord) {
        guard let columns, let rows else { return }
        rows.add(app: record.field(columns.app), storefront: record.field(columns.storefront),
                 genre: record.field(columns.genre), rank: record.field(columns.rank),
                 date: record.field(columns.date))
    }

    /// The staging table holds rows the load did not write in this process, or lost some it wrote: the rows are
    /// read from the table.
    func stagingChanged() {
        rows = nil
    }

    /// Sorts and encodes the rows, before the swap: from those gathered, else from the staging table (its indexes
    /// built). Lists are not made when a row does not fit them (`ChartAppRows`).
    func prepare(_ connection: SQLiteConnection) throws {
        let gathered: ChartAppRows
        if let rows {
            gathered = rows
            self.rows = nil
        } else {
            gathered = ChartAppRows()
            // A table without one of the columns (a file that lacks it) has no lists: readers read the table.
            let names = Set(try connection.query("SELECT name FROM pragma_table_info(?1)", [.text(staging)])
                .compactMap { row -> String? in if case .text(let name) = row.first { name } else { nil } })
            guard Self.columns.allSatisfy(names.contains) else {
                lists = nil
                entries = 0
                return
            }
            let select = try connection.prepare("""
                SELECT application_id, storefront_id, genre_id, application_rank, export_date
                FROM \(SQLiteConnection.quote(staging))
                """)
            while try select.step() {
                gathered.add(app: select.int64(at: 0), storefront: select.int64(at: 1), genre: select.int64(at: 2),
                             rank: select.int64(at: 3), date: select.int64(at: 4))
            }
        }
        entries = gathered.count
        lists = gathered.finish()
    }

    /// Replaces the table's lists with the prepared ones, stamped with the table's newest applied ledger entry
    /// (call inside the swap, after the ledger entry of this load); without prepared lists, removes the table's.
    func publish(_ connection: SQLiteConnection) throws {
        try connection.execute(ChartAppLists.schema)
        guard let low = ChartAppLists.key(table: table, firstID: 0),
              let high = ChartAppLists.key(table: table, firstID: (1 << ChartAppLists.idBits) - 1) else { return }
        let remove = try connection.prepare("DELETE FROM \(ChartAppLists.listsTable) WHERE id BETWEEN ?1 AND ?2")
        try remove.bind([.integer(low), .integer(high)])
        try remove.step()
        let unstamp = try connection.prepare("DELETE FROM \(ChartAppLists.stampsTable) WHERE table_name = ?1")
        try unstamp.bind([.text(table)])
        try unstamp.step()
        guard let lists, case .integer(let ledgerID) = try connection.scalar(
            "SELECT max(id) FROM epf_ledger WHERE table_name = ?1 AND outcome = 'applied'", [.text(table)])
        else { return }
        self.lists = nil
        let insert = try connection.prepare("INSERT INTO \(ChartAppLists.listsTable) (id, list) VALUES (?1, ?2)")
        for list in lists {
            try insert.bind([.integer(low + list.firstID), .blob(list.bytes)])
            try insert.runOnce()
        }
        let stamp = try connection.prepare("INSERT INTO \(ChartAppLists.stampsTable) (table_name, ledger_id, entries) "
                                           + "VALUES (?1, ?2, ?3)")
        try stamp.bind([.text(table), .integer(ledgerID), .integer(Int64(entries))])
        try stamp.step()
    }
}
