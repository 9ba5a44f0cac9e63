// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "epf",
    // Linux only: the code imports Glibc and links Debian's -dev packages. SwiftPM cannot declare a Linux-only
    // package, so no `platforms` are listed rather than a macOS version the code does not build for.
    products: [
        .executable(name: "epf", targets: ["epf"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages; each target holds only a modulemap and a shim header.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBzip2", path: "Sources/CBzip2", providers: [.apt(["libbz2-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libpq's declarations only: the library is opened at first use (see Sources/CLibPQ/shim.h).
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", providers: [.apt(["libpq-dev"])]),

        // Threads by one set of rules: a mutex, a monitor to wait on, a bounded blocking queue and a worker thread
        // that is always joined. Standard library and Glibc only.
        .target(name: "EPFConcurrency"),
        // One JSON value type and writer for every output (CLI --json, HTTP bodies, stored documents).
        .target(name: "JSONText"),
        // Bytes -> records: sources (file, gzip, bzip2, tar), record splitter, header, feed layout.
        .target(name: "EPFFormat", dependencies: ["EPFConcurrency", "CZlib", "CBzip2"]),
        // Deterministic synthetic feeds in the exact EPF format.
        .target(name: "EPFGenerator", dependencies: ["EPFConcurrency", "EPFFormat", "CBzip2", "CZlib"]),
        // The SQLite driver: connection, statements, errors, the mapped VFS, epf's SQL functions. The only module
        // that imports CSQLite.
        .target(name: "EPFSQLite", dependencies: ["CSQLite"]),
        // What readers of a database epf built need of its layout: the names of the tables the importer keeps
        // (changes, price history, search index), its bookkeeping read side (`epf_tables`, `epf_ledger`,
        // `epf_sources`, the stamps of derived data) and the search text's normalisation. The writers use the same
        // names from here; the readers need nothing of the importer.
        .target(name: "EPFSchema", dependencies: ["EPFSQLite", "JSONText"]),
        // A thin libpq wrapper and PostgreSQL's binary COPY format.
        .target(name: "EPFPostgres", dependencies: ["CLibPQ"]),
        // Apache Parquet files, written row by row with bounded memory: Thrift compact metadata, PLAIN and
        // dictionary encodings, RLE/bit-packed levels, the GZIP codec (zlib), statistics. Knows nothing of EPF.
        .target(name: "EPFParquet", dependencies: ["EPFConcurrency", "CZlib"]),
        // Rows -> Parquet files: `epf export`'s tables, typed, split by storefront, with a manifest.
        .target(name: "EPFExport", dependencies: ["EPFParquet", "EPFSchema", "EPFSQLite", "EPFFormat", "JSONText"]),
        // The import engine both stores share, knowing no database: schema mapping, the record loop and the load's
        // state, checkpoints, rejects, selection, ordering, failures, mixed exports, the status rules, the sync
        // plan. A store plugs in through small protocols (TableLoading, ImportLedger, LoadRecorder, RowSink).
        .target(name: "EPFImport", dependencies: ["EPFFormat", "JSONText"]),
        // Records -> rows in SQLite: the store behind EPFImport's protocols, its bookkeeping, its DDL and price
        // history layout. Its second room, PostgreSQL/, is a module of its own (EPFPostgresStore) so that what reads
        // the database (EPFQuery, EPFServer, EPFFetch) does not depend on libpq.
        .target(name: "EPFStore",
                dependencies: ["EPFConcurrency", "EPFFormat", "EPFImport", "EPFSchema", "EPFSQLite", "JSONText"],
                exclude: ["PostgreSQL"]),
        // The same loads into PostgreSQL, behind EPFImport's shared import loop (ImportPass); only epf links it.
        .target(name: "EPFPostgresStore",
                dependencies: ["EPFImport", "EPFStore", "EPFSchema", "EPFFormat", "EPFPostgres"],
                path: "Sources/EPFStore/PostgreSQL"),
        // Rows -> answers: link resolution, lookup, search, prices; shared by CLI and HTTP.
        .target(name: "EPFQuery", dependencies: ["EPFFormat", "EPFSchema", "EPFSQLite", "JSONText"]),
        // Mirrors Apple's feed server: listings, verified, resumable, multi-connection downloads (libcurl).
        .target(name: "EPFFetch", dependencies: ["EPFConcurrency", "EPFFormat", "EPFSchema", "EPFSQLite", "CCurl"]),
        // HTTP/1.1 transport: sockets, parser, workers, response writer, metrics. Knows nothing of EPF.
        .target(name: "HTTPTransport", dependencies: ["EPFConcurrency"]),
        // The EPF API: routes over EPFQuery, the response cache and the status report, on HTTPTransport.
        .target(name: "EPFServer",
                dependencies: ["EPFFormat", "EPFSchema", "EPFSQLite", "EPFQuery", "HTTPTransport", "JSONText"]),
        // The executable: argument parsing and output only.
        .executableTarget(name: "epf",
                          dependencies: ["EPFConcurrency", "EPFSQLite", "EPFFormat", "EPFGenerator", "EPFSchema",
                                         "EPFImport", "EPFStore", "EPFPostgresStore", "EPFQuery", "EPFServer",
                                         "HTTPTransport", "JSONText", "EPFFetch", "EPFPostgres", "EPFParquet",
                                         "EPFExport"]),
        // Swift-side micro-benchmarks for benchmarks/run; not shipped.
        .executableTarget(name: "epf-bench",
                          dependencies: ["EPFFormat", "EPFQuery", "EPFSchema", "EPFServer", "EPFSQLite",
                                         "HTTPTransport"],
                          path: "benchmarks/swift"),
        // The test feed server (Tests/EPFTestSupport/FeedServer.swift) as a process, for the fetch benchmark.
        .executableTarget(name: "epf-feed-server", dependencies: ["EPFTestSupport"], path: "benchmarks/feed-server"),

        // Fuzz targets: one harness per parser of outside bytes, with its oracle (fuzz/README.md, scripts/fuzz).
        .target(name: "EPFFuzzTargets",
                dependencies: ["EPFFormat", "HTTPTransport", "EPFFetch", "EPFQuery", "EPFServer", "EPFTestSupport",
                               "CBzip2", "CZlib"],
                path: "fuzz/Sources/EPFFuzzTargets"),
        // Replays inputs through the harnesses; built with -DEPF_LIBFUZZER and -sanitize=fuzzer it is the fuzzer.
        .executableTarget(name: "epf-fuzz", dependencies: ["EPFFuzzTargets", "CLibFuzzer"],
                          path: "fuzz/Sources/epf-fuzz"),
        // libFuzzer's LLVMFuzzerRunDriver, declared only: linked by -sanitize=fuzzer in the fuzz build.
        .systemLibrary(name: "CLibFuzzer", path: "fuzz/Sources/CLibFuzzer"),
        .testTarget(name: "EPFFuzzTargetsTests", dependencies: ["EPFFuzzTargets"],
                    path: "fuzz/Tests/EPFFuzzTargetsTests"),

        .testTarget(name: "EPFFormatTests", dependencies: ["EPFFormat", "EPFTestSupport"]),
        .testTarget(name: "EPFSQLiteTests", dependencies: ["EPFSQLite", "EPFTestSupport"]),
        .testTarget(name: "EPFStoreTests",
                    dependencies: ["EPFFormat", "EPFImport", "EPFSchema", "EPFSQLite", "EPFStore", "EPFGenerator",
                                   "EPFTestSupport"]),
        // Shared test support: the small catalogue (SQL and a database of it), temporary directories, a feed server,
        // a throwaway PostgreSQL cluster.
        .target(name: "EPFTestSupport",
                dependencies: ["EPFFormat", "EPFImport", "EPFSchema", "EPFSQLite", "EPFStore", "EPFPostgres"],
                path: "Tests/EPFTestSupport"),
        .testTarget(name: "EPFQueryTests",
                    dependencies: ["EPFImport", "EPFSchema", "EPFSQLite", "EPFQuery", "EPFStore", "EPFGenerator",
                                   "EPFTestSupport", "JSONText"]),
        .testTarget(name: "EPFServerTests",
                    dependencies: ["EPFImport", "EPFSchema", "EPFSQLite", "EPFServer", "EPFQuery", "HTTPTransport",
                                   "EPFTestSupport", "EPFGenerator", "EPFStore"]),
        .testTarget(name: "HTTPTransportTests", dependencies: ["HTTPTransport", "JSONText"]),
        .testTarget(name: "JSONTextTests", dependencies: ["JSONText"]),
        .testTarget(name: "EPFConcurrencyTests", dependencies: ["EPFConcurrency"]),
        .testTarget(name: "EPFParquetTests", dependencies: ["EPFParquet", "EPFExport", "EPFTestSupport", "JSONText"]),
        .testTarget(name: "EndToEndTests",
                    dependencies: ["EPFSchema", "EPFSQLite", "EPFGenerator", "EPFStore", "EPFTestSupport"]),
        .testTarget(name: "EPFGeneratorTests", dependencies: ["EPFGenerator", "EPFFormat", "EPFTestSupport"]),
        .testTarget(name: "EPFFetchTests", dependencies: ["EPFFetch", "EPFTestSupport"]),
        // The import contract as a randomized, model-checked matrix on both stores (runs the built epf).
        .testTarget(name: "ContractTests",
                    dependencies: ["EPFSQLite", "EPFTestSupport", "EPFStore", "EPFPostgres", "EPFSchema",
                                   "EPFConcurrency"]),
        // Against a throwaway PostgreSQL cluster the tests start themselves (Debian package postgresql).
        .testTarget(name: "PostgresTests",
                    dependencies: ["EPFPostgresStore", "EPFImport", "EPFSchema", "EPFSQLite", "EPFPostgres",
                                   "EPFStore", "EPFGenerator", "EPFFormat", "EPFTestSupport", "JSONText"]),
    ],
    swiftLanguageModes: [.v6]
)
