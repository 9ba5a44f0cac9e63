import EPFConcurrency

/// Request counters and a latency histogram, sharded per worker thread so workers never contend.
///
/// Thread-safe: each shard has its own mutex; `snapshot()` sums the shards.
package final class ServerMetrics: Sendable {
    /// Upper bounds (seconds) of the latency histogram buckets; `+Inf` is implied.
    package static let latencyBuckets: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
    ]

    /// A route and status pair, the label set of `epf_http_requests_total`.
    package struct Key: Hashable, Sendable {
        /// Low-cardinality route name, e.g. `"apps"`.
        package let route: String
        /// The status code sent.
        package let status: Int
    }

    /// Summed counters at one moment.
    package struct Snapshot: Sendable {
        /// Requests by route and status.
        package var requests: [Key: UInt64] = [:]
        /// Cumulative-free counts per bucket (same order as `latencyBuckets`, plus one for +Inf).
        package var bucketCounts: [UInt64] = Array(repeating: 0, count: ServerMetrics.latencyBuckets.count + 1)
        /// Sum of all latencies in seconds.
        package var latencySum: Double = 0
        /// Requests observed by the histogram.
        package var latencyCount: UInt64 = 0
        /// Currently open client connections.
        package var openConnections: Int = 0
        /// Connections accepted since start.
        package var acceptedConnections: UInt64 = 0
        /// Connections refused with 503 because `maxConnections` was reached.
        package var rejectedConnections: UInt64 = 0
        /// Connections closed for idling or sending too slowly.
        package var timedOutConnections: UInt64 = 0
    }

    /// One worker's counters.
    final class Shard: Sendable {
        struct Counts {
            var requests: [Key: UInt64] = [:]
            var buckets = [UInt64](repeating: 0, count: ServerMetrics.latencyBuckets.count + 1)
            var sum: Double = 0
            var count: UInt64 = 0
            var accepted: UInt64 = 0
            var rejected: UInt64 = 0
            var timedOut: UInt64 = 0
        }

        let counts = Mutex(Counts())
    }

    private let shards = Mutex<[Shard]>([])
    private let open = Mutex(0)

    /// Creates empty metrics.
    package init() {}

    func makeShard() -> Shard {
        let shard = Shard()
        shards.withLock { $0.append(shard) }
        return shard
    }

    /// Counts one more open connection unless `limit` are open; false when the caller must refuse it.
    func openConnection(limit: Int) -> Bool {
        open.withLock { open in
            guard open < limit else { return false }
            open += 1
            return true
        }
    }

    /// Counts one connection closed.
    func closeConnection() {
        open.withLock { $0 -= 1 }
    }

    /// The number of connections open now.
    package var openConnections: Int { open.withLock { $0 } }

    /// Sums every shard.
    package func snapshot() -> Snapshot {
        var result = Snapshot()
        let all = shards.withLock { $0 }
        for shard in all {
            let counts = shard.counts.withLock { $0 }
            for (key, value) in counts.requests { result.requests[key, default: 0] += value }
            for index in counts.buckets.indices { result.bucketCounts[index] += counts.buckets[index] }
            result.latencySum += counts.sum
            result.latencyCount += counts.count
            result.acceptedConnections += counts.accepted
            result.rejectedConnections += counts.rejected
            result.timedOutConnections += counts.timedOut
        }
        result.openConnections = openConnections
        return result
    }

    /// The transport's metrics in Prometheus text format 0.0.4 (`# HELP`, `# TYPE`, samples).
    package func prometheusText() -> String {
        let snapshot = snapshot()
        var text = "# HELP epf_http_requests_total HTTP requests answered, by route and status.\n"
        text += "# TYPE epf_http_requests_total counter\n"
        let keys = snapshot.requests.keys.sorted { ($0.route, $0.status) < ($1.route, $1.status) }
        for key in keys {
            text += "epf_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} "
                + "\(snapshot.requests[key] ?? 0)\n"
        }
        text += "# HELP epf_http_request_duration_seconds Time from a parsed request to its queued response.\n"
        text += "# TYPE epf_http_request_duration_seconds histogram\n"
        var cumulative: UInt64 = 0
        for (index, bound) in ServerMetrics.latencyBuckets.enumerated() {
            cumulative += snapshot.bucketCounts[index]
            text += "epf_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += snapshot.bucketCounts[ServerMetrics.latencyBuckets.count]
        text += "epf_http_request_duration_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        text += "epf_http_request_duration_seconds_sum \(snapshot.latencySum)\n"
        text += "epf_http_request_duration_seconds_count \(snapshot.latencyCount)\n"
        text += "# HELP epf_http_open_connections Client connections open now.\n"
        text += "# TYPE epf_http_open_connections gauge\n"
        text += "epf_http_open_connections \(snapshot.openConnections)\n"
        text += "# HELP epf_http_connections_accepted_total Client connections accepted.\n"
        text += "# TYPE epf_http_connections_accepted_total counter\n"
        text += "epf_http_connections_accepted_total \(snapshot.acceptedConnections)\n"
        text += "# HELP epf_http_connections_rejected_total Connections answered 503 at --max-connections.\n"
        text += "# TYPE epf_http_connections_rejected_total counter\n"
        text += "epf_http_connections_rejected_total \(snapshot.rejectedConnections)\n"
        text += "# HELP epf_http_connections_timed_out_total Connections closed by --idle-timeout.\n"
        text += "# TYPE epf_http_connections_timed_out_total counter\n"
        text += "epf_http_connections_timed_out_total \(snapshot.timedOutConnections)\n"
        return text
    }
}

extension ServerMetrics.Shard {
    @inline(__always)
    func record(route: String, status: Int, seconds: Double) {
        var bucket = ServerMetrics.latencyBuckets.count
        for (index, bound) in ServerMetrics.latencyBuckets.enumerated() where seconds <= bound {
            bucket = index
            break
        }
        counts.withLock { counts in
            counts.requests[ServerMetrics.Key(route: route, status: status), default: 0] += 1
            counts.buckets[bucket] += 1
            counts.sum += seconds
            counts.count += 1
        }
    }

    func countAccepted() { counts.withLock { $0.accepted += 1 } }
    func countRejected() { counts.withLock { $0.rejected += 1 } }
    func countTimedOut() { counts.withLock { $0.timedOut += 1 } }
}
