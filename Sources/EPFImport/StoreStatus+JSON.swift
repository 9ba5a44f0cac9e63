import EPFFormat
import JSONText

extension StoreStatus {
    /// The status as JSON: the one shape of `epf status --json` and of `/v1/status` (which adds a `server`
    /// object). Export dates appear twice, as ISO 8601 UTC (`exportDate`) and as EPF's milliseconds
    /// (`exportDateMs`); the top-level `exportDate` is the date the data is complete as of (`dataAsOf`: a table
    /// held back by a failure or an older full holds it back), `newestExportDate` the newest of any table, `mixed`
    /// whether the tables mix exports, `failures` the files not applied and not made up for since, `missing` the
    /// tables (or `<feed> feed`s) those failures name that the database holds nothing of, `incrementalOnly` the
    /// tables loaded from incrementals alone (with `--force`, no full), `importRunning` whether an import holds the
    /// import lock now (the tables are then what it committed so far), `retired` the tables the newest full of
    /// their feed no longer contained (`{"table", "feed", "keptAsOf", "notInFull"}`: kept as of their last full, not
    /// behind);
    /// `exportDateFallback` stands in for the top-level date when no table has bookkeeping, and
    /// `extra` members are appended. `mixedExports` is null, or names the tables behind the newest full export
    /// and what the next `epf sync` does about them. `selection` holds the storefronts (`id`, `country`) and
    /// languages the database keeps, each null when it keeps all;
    /// `priceHistory` whether imports record price changes (`--history prices`) and `priceChanges` how many;
    /// `rankHistory` whether they record each day's ranks (`--history ranks`), `rankDays` the days held and
    /// `rankNewestDay` the newest (ISO 8601, null when none).
    package func json(exportDateFallback: Int64? = nil, extra: [(String, JSONValue)] = []) -> JSONValue {
        func date(_ milliseconds: Int64?) -> JSONValue {
            milliseconds.map { .string(EPFValues.isoTimestamp(milliseconds: $0)) } ?? .null
        }
        func milliseconds(_ value: Int64?) -> JSONValue { value.map { .int($0) } ?? .null }
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        let tables: [JSONValue] = tables.map { table in
            .object([
                ("name", .string(table.name)), ("rows", .int(table.rows)),
                ("exportDate", date(table.exportDate)), ("exportDateMs", milliseconds(table.exportDate)),
                ("mode", text(table.mode)), ("updated", text(table.updated)),
            ])
        }
        let imports: [JSONValue] = lastImports.map { entry in
            .object([
                ("table", .string(entry.table)), ("location", .string(entry.location)), ("mode", text(entry.mode)),
                ("exportDate", date(entry.exportDate)), ("exportDateMs", milliseconds(entry.exportDate)),
                ("rows", .int(entry.rows)), ("rejects", .int(entry.rejects)), ("repaired", .int(entry.repaired)),
                ("duplicates", .int(entry.duplicates)), ("finished", text(entry.finished)),
                ("outcome", .string(entry.outcome)), ("message", text(entry.message)),
            ])
        }
        let derived: [JSONValue] = derived.map { item in
            .object([("name", .string(item.name)), ("built", text(item.built)), ("current", .bool(item.current))])
        }
        let storefronts: JSONValue = selection.storefronts.map { ids in
            .array(ids.map { id in
                .object([("id", .int(Int64(id))),
                         ("country", AppleStorefronts.entry(id: id).map { .string($0.linkCode) } ?? .null)])
            })
        } ?? .null
        let languages: JSONValue = selection.languages.map { .array($0.map { .string($0) }) } ?? .null
        let asOf = dataAsOf ?? exportDateFallback
        let newest = exportDate ?? exportDateFallback
        return .object([
            ("database", .string(database)),
            ("sizeBytes", .int(sizeBytes)),
            ("exportDate", date(asOf)),
            ("exportDateMs", milliseconds(asOf)),
            ("newestExportDate", date(newest)),
            ("mixed", .bool(mixed)),
            ("importRunning", .bool(importRunning)),
            ("failures", .array(failures.map(\.json))),
            ("missing", .array(missing.map { .string($0) })),
            ("incrementalOnly", .array(incrementalOnly.map { .string($0) })),
            ("retired", .array(retired.map(\.json))),
            ("tables", .array(tables)),
            ("derived", .array(derived)),
            ("mixedExports", mixedExports?.json ?? .null),
            ("selection", .object([("storefronts", storefronts), ("languages", languages)])),
            ("priceHistory", .bool(priceHistory)),
            ("priceChanges", .int(priceChanges)),
            ("rankHistory", .bool(rankHistory)),
            ("rankDays", .int(Int64(rankDays))),
            ("rankNewestDay", date(rankNewestDay)),
            ("lastImport", imports.first ?? .null),
            ("lastImports", .array(imports)),
        ] + extra)
    }
}
